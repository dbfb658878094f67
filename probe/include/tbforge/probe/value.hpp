#pragma once
// The stored value of a position: WDL for the side to move plus DTC in plies
// (docs/ARCHITECTURE.md section 4). Encoded in 16 bits: 0 = draw, 1 + 2d = win in d
// plies, 2 + 2d = loss in d plies. Small values dominate, so tables whose
// longest distance fits are stored with one byte per slot.

#include <cstdint>

#include "tbforge/rules/types.hpp"

namespace tbf::probe {

struct Value {
    Wdl wdl = Wdl::Draw;
    std::uint16_t dtc = 0;

    friend bool operator==(const Value&, const Value&) = default;
};

inline constexpr std::uint16_t kMaxDtc = 32766;

constexpr std::uint16_t encode_value(Value v) {
    switch (v.wdl) {
        case Wdl::Win:
            return static_cast<std::uint16_t>(1 + 2 * v.dtc);
        case Wdl::Loss:
            return static_cast<std::uint16_t>(2 + 2 * v.dtc);
        case Wdl::Draw:
            break;
    }
    return 0;
}

constexpr Value decode_value(std::uint16_t code) {
    if (code == 0) return {};
    const auto dtc = static_cast<std::uint16_t>((code - 1) / 2);
    return {(code & 1) ? Wdl::Win : Wdl::Loss, dtc};
}

// The value of a move for the side making it, given the value of the
// position it leads to (for the side then to move) and whether it converts.
constexpr Value move_value(Value child, bool conversion) {
    const Wdl wdl = -child.wdl;
    if (wdl == Wdl::Draw) return {};
    return {wdl, static_cast<std::uint16_t>(conversion ? 1 : child.dtc + 1)};
}

// Orders moves best first for the mover: wins by increasing DTC, then draws,
// then losses by decreasing DTC.
constexpr bool better_for_mover(Value a, Value b) {
    if (a.wdl != b.wdl) return static_cast<int>(a.wdl) > static_cast<int>(b.wdl);
    if (a.wdl == Wdl::Win) return a.dtc < b.dtc;
    if (a.wdl == Wdl::Loss) return a.dtc > b.dtc;
    return false;
}

}  // namespace tbf::probe
