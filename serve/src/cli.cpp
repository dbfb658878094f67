#include "tbforge/serve/cli.hpp"

#include <pthread.h>

#include <csignal>
#include <iostream>
#include <string>
#include <thread>
#include <vector>

#include "tbforge/base/cli.hpp"
#include "tbforge/base/exit_code.hpp"
#include "tbforge/probe/tablebase.hpp"
#include "tbforge/serve/server.hpp"
#include "tbforge/serve/service.hpp"

namespace tbf::serve {

namespace {

constexpr std::string_view kProgram = "tbserve";

constexpr const char* kUsage =
    "usage: tbserve --db DIR [--listen HOST:PORT] [--threads N] [--cache BYTES] [--web DIR]\n"
    "\n"
    "Answers HTTP requests like the lichess tablebase API:\n"
    "  GET /{variant}?fen=FEN           the position's value and every move's, best first\n"
    "  GET /{variant}/mainline?fen=FEN  the best line to the next conversion\n"
    "  GET /health                      {\"status\":\"ok\",...}\n"
    "  GET /                            the web explorer\n"
    "Variants: antichess, antichess-fics, antichess-joint, fourfile; spaces in the\n"
    "FEN may be written as underscores.\n"
    "\n"
    "  --listen HOST:PORT  address to listen on (default 127.0.0.1:9000; port 0: any\n"
    "                      free port); the address is printed on standard output\n"
    "  --threads N         worker threads, one connection each (default 32)\n"
    "  --cache BYTES       decompressed-block cache, e.g. 64M (default 256M)\n"
    "  --web DIR           folder of the web explorer (default: the one built)\n"
    "One line per request goes to standard error. SIGINT or SIGTERM stop the server.\n"
    "Exit status: 0 stopped by a signal, 2 bad usage, 3 database or socket error.\n";

struct Listen {
    std::string host;
    int port = 0;
};

Result<Listen> parse_listen(const std::string& text) {
    const auto colon = text.rfind(':');
    if (colon == std::string::npos || colon == 0) {
        return invalid_argument("bad --listen \"" + text + "\" (expected HOST:PORT)");
    }
    std::string host = text.substr(0, colon);
    if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
        host = host.substr(1, host.size() - 2);  // [::1]:9000
    }
    auto port = cli::parse_number("listen", text.substr(colon + 1), 0, 65535);
    if (!port.ok()) {
        return invalid_argument("bad --listen \"" + text + "\" (expected HOST:PORT, port 0 to 65535)");
    }
    return Listen{host, static_cast<int>(*port)};
}

Status run(const std::vector<std::string>& args, const char* default_web_dir) {
    // SIGINT and SIGTERM are taken by one thread that stops the server, and
    // blocked in every other thread: blocked here, before the database and
    // the server start theirs, since threads inherit the mask. SIGPIPE from
    // a client that went away is ignored: the write fails instead.
    std::signal(SIGPIPE, SIG_IGN);
    sigset_t stop_signals;
    sigemptyset(&stop_signals);
    sigaddset(&stop_signals, SIGINT);
    sigaddset(&stop_signals, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);

    cli::Command command(kUsage);
    for (const char* name : {"db", "listen", "threads", "cache", "web"}) command.value(name);
    auto parsed = command.parse(args, std::cout);
    if (!parsed.ok() || !*parsed) return parsed.status();
    auto dir = command.required("db");
    if (!dir.ok()) return dir.status();
    auto listen = parse_listen(command.optional("listen").value_or("127.0.0.1:9000"));
    if (!listen.ok()) return listen.status();
    auto threads = command.number("threads", 1, 1024);
    if (!threads.ok()) return threads.status();
    probe::TablebaseOptions tb_options;
    auto cache = command.byte_size("cache");
    if (!cache.ok()) return cache.status();
    if (*cache) tb_options.cache_bytes = **cache;

    auto tb = probe::Tablebase::open(*dir, tb_options);
    if (!tb.ok()) return tb.status();
    auto tables = tb->database().list_tables();
    if (!tables.ok()) return probe::probe_status(tables.status());

    const std::string web_dir = command.optional("web").value_or(default_web_dir);
    WebFiles web;
    if (!web_dir.empty()) {
        auto loaded = WebFiles::load(web_dir);
        // A folder given on purpose must be there; the built one is optional.
        if (!loaded.ok() && command.has("web")) return loaded.status();
        if (loaded.ok()) web = std::move(*loaded);
    }
    const bool has_web = web.size() > 0;
    const Service service(*tb, std::move(web), tables->size());

    ServerOptions options;
    options.host = listen->host;
    options.port = listen->port;
    if (*threads) options.threads = static_cast<std::size_t>(**threads);
    Server server(service, options);
    auto port = server.bind();
    if (!port.ok()) return port.status();

    std::thread stopper([&] {
        int received = 0;
        sigwait(&stop_signals, &received);
        server.stop();
    });

    const std::string shown_host =
        listen->host.find(':') != std::string::npos ? "[" + listen->host + "]" : listen->host;
    std::cout << "tbserve: listening on http://" << shown_host << ':' << *port << "/ ("
              << tables->size() << " tables, web explorer "
              << (has_web ? web_dir : std::string("not built")) << ")" << std::endl;
    Status status = server.run();
    // Wake the stopper if the server ended by itself.
    pthread_kill(stopper.native_handle(), SIGTERM);
    stopper.join();
    return status;
}

}  // namespace

int run_cli(int argc, char** argv, const char* default_web_dir) {
    const std::vector<std::string> args(argv + 1, argv + argc);
    if (args.empty()) {
        std::cout << kUsage;
        return kExitUsage;
    }
    return report(std::cerr, kProgram, run(args, default_web_dir ? default_web_dir : ""));
}

}  // namespace tbf::serve
