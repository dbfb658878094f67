// The C++ API from an installed prefix (find_package(tbforge)): the same
// output as probe_c.c, one line "category dtc moves best" per FEN.
#include <iostream>

#include <tbforge/probe/tablebase.hpp>
#include <tbforge/rules/fen.hpp>

int main(int argc, char** argv) {
    if (argc < 3) {
        std::cerr << "usage: probe_cpp DB FEN...\n";
        return 2;
    }
    auto tb = tbf::probe::Tablebase::open(argv[1]);
    if (!tb) {
        std::cerr << tb.status().message() << '\n';
        return 3;
    }
    int rc = 0;
    for (int i = 2; i < argc; ++i) {
        auto pos = tbf::parse_fen(argv[i], tbf::VariantId::Antichess);
        if (!pos) {
            std::cerr << pos.status().message() << '\n';
            rc = 2;
            continue;
        }
        auto value = tb->probe(tbf::VariantId::Antichess, *pos);
        auto moves = tb->probe_moves(tbf::VariantId::Antichess, *pos);
        if (!value || !moves) {
            std::cerr << (value ? moves.status() : value.status()).message() << '\n';
            rc = 3;
            continue;
        }
        const char* category = value->wdl == tbf::Wdl::Win    ? "win"
                                : value->wdl == tbf::Wdl::Loss ? "loss"
                                                               : "draw";
        std::cout << category << ' ' << value->dtc << ' ' << moves->size() << ' '
                  << (moves->empty() ? "-" : moves->front().uci) << '\n';
    }
    return rc;
}
