#include "tbforge/base/json.hpp"

#include <cmath>

namespace tbf {

std::string to_json_line(const Json& value) {
    return value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

double rounded_seconds(double seconds) { return std::round(seconds * 1000.0) / 1000.0; }

}  // namespace tbf
