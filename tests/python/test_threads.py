"""Four threads probing one Tablebase at once agree with one thread."""

import threading

import tbforge


def probe_all(tb, work):
    out = []
    for variant, fen in work:
        try:
            out.append(tb.probe(fen, variant=variant))
        except (ValueError, KeyError) as e:
            out.append((type(e), e.args[0]))
    return out


def run_threads(count, target):
    barrier = threading.Barrier(count)
    results = [None] * count
    errors = []

    def body(i):
        try:
            barrier.wait()
            results[i] = target(i)
        except BaseException as e:  # reported below, not lost in the thread
            errors.append(e)

    threads = [threading.Thread(target=body, args=(i,)) for i in range(count)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    return results


def test_four_threads_agree_with_one(db, sample):
    work = [(variant, fen) for variant, fens in sample.items() for fen in fens]
    # A small cache: the threads keep decoding blocks, not only reading them.
    with tbforge.open_tablebase(db, cache_bytes=1 << 20) as tb:
        alone = probe_all(tb, work)
        together = run_threads(4, lambda i: probe_all(tb, work[i:] + work[:i]))
    for i, got in enumerate(together):
        assert got == alone[i:] + alone[:i]


def test_close_while_threads_probe(db):
    """close() under running probes: each probe finishes with the right value
    or raises ValueError; nothing crashes."""
    tb = tbforge.open_tablebase(db)
    fen = "8/8/8/8/8/8/8/KQ3k2 b - - 0 1"
    probing = threading.Semaphore(0)

    def body(i):
        if i == 4:
            for _ in range(4):  # every prober is under way
                assert probing.acquire(timeout=60)
            tb.close()
            return 0
        probes = 0
        while True:
            try:
                assert tb.probe(fen).value == tbforge.Value("win", 2)
            except ValueError as e:
                assert "closed" in str(e)
                return probes
            probes += 1
            if probes == 1:
                probing.release()

    probes = run_threads(5, body)
    assert tb.closed
    assert all(n > 0 for n in probes[:4])
