#include "tbforge/index/report.hpp"

#include <cstdio>

#include "tbforge/base/json.hpp"
#include "tbforge/rules/movegen.hpp"

namespace tbf::index {

double IndexReport::ratio(Color side_to_move) const {
    const auto v = valid[static_cast<std::size_t>(to_index(side_to_move))];
    return v == 0 ? 0.0 : static_cast<double>(slots) / static_cast<double>(v);
}

double IndexReport::mean_ratio() const {
    const double mean = (static_cast<double>(valid[0]) + static_cast<double>(valid[1])) / 2.0;
    return mean == 0.0 ? 0.0 : static_cast<double>(slots) / mean;
}

namespace {

// A slot counts when it decodes to a placement that encodes back to it
// (canonical, no overlap) and, with a royal king, the side not to move is
// not in check. A template on the ruleset: the check stays out of the loop
// where there is none.
template <Ruleset R>
std::array<std::uint64_t, 2> valid_per_side(const Indexer& indexer) {
    const auto n = static_cast<std::int64_t>(indexer.size());
    std::uint64_t white = 0;
    std::uint64_t black = 0;
#pragma omp parallel for schedule(static, 1 << 16) reduction(+ : white, black)
    for (std::int64_t i = 0; i < n; ++i) {
        const auto idx = static_cast<Index>(i);
        Placement squares{};
        if (!indexer.decode(idx, squares.data()) || indexer.encode(squares.data()) != idx) continue;
        if constexpr (!R::kRoyalKing) {
            ++white;
            ++black;
        } else {
            Position pos;
            for (int u = 0; u < indexer.unit_count(); ++u) {
                pos.put(squares[static_cast<std::size_t>(u)], indexer.unit(u));
            }
            white += king_attacked<R>(pos, Color::Black) ? 0 : 1;
            black += king_attacked<R>(pos, Color::White) ? 0 : 1;
        }
    }
    return {white, black};
}

}  // namespace

IndexReport count_valid(const Indexer& indexer) {
    IndexReport report;
    report.variant = indexer.variant();
    report.material = indexer.material();
    report.slots = indexer.size();
    report.valid = with_variant(indexer.variant(),
                                [&]<class R>() { return valid_per_side<R>(indexer); });
    return report;
}

Result<IndexReport> index_report(VariantId variant, std::string_view table) {
    auto material = parse_table(table, variant);
    if (!material) return material.status();
    auto indexer = Indexer::create(variant, canonical(*material));
    if (!indexer) return indexer.status();
    return count_valid(*indexer);
}

std::string to_json(const IndexReport& r) {
    return to_json_line(Json{{"variant", std::string(variant_name(r.variant))},
                             {"table", r.material.name()},
                             {"slots", r.slots},
                             {"valid", {r.valid[0], r.valid[1]}}});
}

std::string to_text(const IndexReport& r) {
    char ratios[96];
    std::snprintf(ratios, sizeof ratios, "%.4f %.4f (mean %.4f)", r.ratio(Color::White),
                  r.ratio(Color::Black), r.mean_ratio());
    return std::string(variant_name(r.variant)) + " " + r.material.name() + ": " +
           std::to_string(r.slots) + " slots, valid " + std::to_string(r.valid[0]) + " (w) " +
           std::to_string(r.valid[1]) + " (b), slots/valid " + ratios;
}

}  // namespace tbf::index
