// A bounded load generator for tbserve: N requests over C keep-alive
// connections to a loopback address, cycling through a list of API targets;
// prints requests/s and latency percentiles as one JSON line. It refuses
// any address outside the loopback range, stops after N requests or
// --max-seconds, and exits 1 if any request failed or was not a 200.
//
//   serve_load --port P (--targets FILE | --sample-db DIR) [--requests 20000]
//              [--concurrency 32] [--host 127.0.0.1] [--max-seconds 120]
//
// FILE holds one request target a line ("/antichess?fen=..."); --sample-db
// draws the targets instead from the tables of a database (positions of
// every table, fixed seed), the one tbserve serves.
#include <httplib.h>

#include <random>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <string>
#include <thread>
#include <vector>

#include "tbforge/base/cli.hpp"
#include "tbforge/base/exit_code.hpp"
#include "tbforge/base/json.hpp"
#include "tbforge/probe/tablebase.hpp"
#include "tbforge/rules/fen.hpp"

namespace {

using Clock = std::chrono::steady_clock;

constexpr const char* kUsage =
    "usage: serve_load --port P (--targets FILE | --sample-db DIR) [--requests N]\n"
    "                  [--concurrency C]\n"
    "                  [--host 127.0.0.1] [--max-seconds S]\n";

// About `count` API targets spread over every table of the database.
tbf::Result<std::vector<std::string>> sample_targets(const std::string& dir, std::size_t count) {
    auto tb = tbf::probe::Tablebase::open(dir);
    if (!tb.ok()) return tb.status();
    auto tables = tb->database().list_tables();
    if (!tables.ok()) return tables.status();
    std::vector<std::string> targets;
    std::mt19937_64 rng(1);
    const std::size_t per_table = count / std::max<std::size_t>(tables->size(), 1) + 1;
    for (const auto& info : *tables) {
        auto id = tbf::probe::parse_table_name(info.spec.name);
        if (!id.ok()) continue;
        auto indexer = tbf::index::Indexer::create(id->variant, id->material);
        if (!indexer.ok()) return indexer.status();
        for (std::size_t tries = 0, found = 0; found < per_table && tries < 20 * per_table; ++tries) {
            const auto side = static_cast<tbf::Color>(rng() & 1);
            const auto pos = indexer->position(rng() % indexer->size(), side);
            if (!pos) continue;
            std::string fen = tbf::to_fen(*pos);
            std::replace(fen.begin(), fen.end(), ' ', '_');
            targets.push_back("/" + std::string(tbf::variant_name(id->variant)) + "?fen=" + fen);
            ++found;
        }
    }
    std::shuffle(targets.begin(), targets.end(), rng);
    return targets;
}

bool loopback(const std::string& host) {
    return host == "localhost" || host == "::1" || host.rfind("127.", 0) == 0;
}

tbf::Status run(const std::vector<std::string>& args) {
    tbf::cli::Command command(kUsage);
    for (const char* name :
         {"host", "port", "targets", "sample-db", "requests", "concurrency", "max-seconds"}) {
        command.value(name);
    }
    auto parsed = command.parse(args, std::cout);
    if (!parsed.ok() || !*parsed) return parsed.status();
    const std::string host = command.optional("host").value_or("127.0.0.1");
    if (!loopback(host)) return tbf::invalid_argument("--host must be a loopback address: " + host);
    auto port = command.number("port", 1, 65535);
    if (!port.ok()) return port.status();
    if (!*port) return tbf::invalid_argument("missing --port");
    auto requests = command.number("requests", 1, 10'000'000);
    auto concurrency = command.number("concurrency", 1, 1024);
    auto max_seconds = command.number("max-seconds", 1, 3600);
    if (!requests.ok()) return requests.status();
    if (!concurrency.ok()) return concurrency.status();
    if (!max_seconds.ok()) return max_seconds.status();
    const std::size_t total = requests->value_or(20000);
    const std::size_t clients = concurrency->value_or(32);
    const auto deadline = Clock::now() + std::chrono::seconds(max_seconds->value_or(120));

    std::vector<std::string> targets;
    if (const auto db = command.optional("sample-db")) {
        auto sampled = sample_targets(*db, std::min<std::size_t>(total, 5000));
        if (!sampled.ok()) return sampled.status();
        targets = std::move(*sampled);
    } else {
        auto file = command.required("targets");
        if (!file.ok()) return file.status();
        std::ifstream in(*file);
        if (!in) return tbf::io_error("cannot read " + *file);
        for (std::string line; std::getline(in, line);) {
            if (!line.empty()) targets.push_back(line);
        }
    }
    if (targets.empty()) return tbf::invalid_argument("no request target to send");

    std::atomic<std::size_t> next{0};
    std::atomic<std::size_t> errors{0};
    std::vector<std::vector<double>> latencies(clients);
    std::vector<std::string> first_error(clients);
    const auto start = Clock::now();
    std::vector<std::thread> threads;
    for (std::size_t c = 0; c < clients; ++c) {
        threads.emplace_back([&, c] {
            httplib::Client client(host, static_cast<int>(**port));
            client.set_keep_alive(true);
            client.set_connection_timeout(5, 0);
            client.set_read_timeout(10, 0);
            client.set_write_timeout(10, 0);
            for (std::size_t i = next++; i < total && Clock::now() < deadline; i = next++) {
                const auto sent = Clock::now();
                auto res = client.Get(targets[i % targets.size()]);
                latencies[c].push_back(
                    std::chrono::duration<double, std::milli>(Clock::now() - sent).count());
                if (!res || res->status != 200) {
                    if (errors++ == 0 || first_error[c].empty()) {
                        first_error[c] = res ? "HTTP " + std::to_string(res->status) + " for " +
                                                   targets[i % targets.size()]
                                             : "transport error " + httplib::to_string(res.error());
                    }
                }
            }
        });
    }
    for (auto& t : threads) t.join();
    const double seconds = std::chrono::duration<double>(Clock::now() - start).count();

    std::vector<double> all;
    for (const auto& l : latencies) all.insert(all.end(), l.begin(), l.end());
    std::sort(all.begin(), all.end());
    auto percentile = [&](double p) {
        if (all.empty()) return 0.0;
        const auto at = static_cast<std::size_t>(p * static_cast<double>(all.size() - 1) + 0.5);
        return all[std::min(at, all.size() - 1)];
    };
    tbf::Json out;
    out["requests"] = all.size();
    out["errors"] = errors.load();
    out["concurrency"] = clients;
    out["seconds"] = tbf::rounded_seconds(seconds);
    out["requests_per_second"] = seconds > 0 ? static_cast<double>(all.size()) / seconds : 0.0;
    out["p50_ms"] = percentile(0.50);
    out["p99_ms"] = percentile(0.99);
    out["max_ms"] = all.empty() ? 0.0 : all.back();
    std::cout << tbf::to_json_line(out) << std::endl;
    if (all.size() < total) {
        return tbf::check_failed("stopped at --max-seconds after " + std::to_string(all.size()) +
                                 " of " + std::to_string(total) + " requests");
    }
    if (errors > 0) {
        for (const auto& e : first_error) {
            if (!e.empty()) {
                return tbf::check_failed(std::to_string(errors.load()) +
                                         " failed requests, e.g. " + e);
            }
        }
    }
    return {};
}

}  // namespace

int main(int argc, char** argv) {
    return tbf::report(std::cerr, "serve_load", run({argv + 1, argv + argc}));
}
