// tbserve as its users reach it: a child process on a free loopback port,
// asked over HTTP. Its answers agree with tbprobe --json for a sample of
// positions of every variant; malformed and slow requests get 4xx or are
// cut off while the server keeps serving; a small bounded load (serve_load)
// passes without errors; SIGTERM stops it.
#include <doctest/doctest.h>
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <httplib.h>

#include <chrono>
#include <fstream>
#include <map>
#include <sstream>
#include <thread>

#include "serve_fixture.hpp"

using namespace tbf;
using namespace tbf::test;

namespace {

using Clock = std::chrono::steady_clock;

std::string slurp(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

struct Run {
    int rc = -1;
    std::string out;
    std::string err;
};

// Runs `program` with `args`, `input` on standard input, and waits for it.
Run run_process(const std::string& program, const std::vector<std::string>& args,
                const std::string& input = {}) {
    static ScratchDir io;
    {
        std::ofstream in(io.sub("stdin"), std::ios::binary);
        in << input;
    }
    const pid_t pid = fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
        const int in = open(io.sub("stdin").c_str(), O_RDONLY);
        const int out = open(io.sub("stdout").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
        const int err = open(io.sub("stderr").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (in < 0 || out < 0 || err < 0) _exit(126);
        dup2(in, 0);
        dup2(out, 1);
        dup2(err, 2);
        std::vector<std::string> copy = args;
        std::vector<char*> argv{const_cast<char*>(program.c_str())};
        for (auto& a : copy) argv.push_back(a.data());
        argv.push_back(nullptr);
        execv(program.c_str(), argv.data());
        _exit(127);
    }
    int status = 0;
    REQUIRE(waitpid(pid, &status, 0) == pid);
    return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, slurp(io.sub("stdout")),
            slurp(io.sub("stderr"))};
}

// tbserve on 127.0.0.1:0, its address read from the first line it prints.
class TbServe {
public:
    explicit TbServe(std::vector<std::string> extra = {}) {
        // Arguments are made before fork(): the child only execs.
        std::vector<std::string> args = {TBF_TBSERVE, "--db", ServeDb::get().path(),
                                         "--listen", "127.0.0.1:0", "--web", web_dir()};
        args.insert(args.end(), extra.begin(), extra.end());
        std::vector<char*> argv;
        for (auto& a : args) argv.push_back(a.data());
        argv.push_back(nullptr);
        int out[2];
        REQUIRE(pipe(out) == 0);
        pid_ = fork();
        REQUIRE(pid_ >= 0);
        if (pid_ == 0) {
            close(out[0]);
            const int err = open(log_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
            if (err < 0) _exit(126);
            dup2(out[1], 1);
            dup2(err, 2);
            execv(TBF_TBSERVE, argv.data());
            _exit(127);
        }
        close(out[1]);
        // The first line: "tbserve: listening on http://127.0.0.1:PORT/ (...)".
        std::string line;
        const auto deadline = Clock::now() + std::chrono::seconds(60);
        while (line.find('\n') == std::string::npos && Clock::now() < deadline) {
            pollfd p{out[0], POLLIN, 0};
            if (poll(&p, 1, 1000) <= 0) continue;
            char buffer[256];
            const ssize_t n = read(out[0], buffer, sizeof buffer);
            if (n <= 0) break;
            line.append(buffer, static_cast<std::size_t>(n));
        }
        close(out[0]);
        const auto at = line.find("http://127.0.0.1:");
        REQUIRE_MESSAGE(at != std::string::npos, "tbserve did not start: " << line << slurp(log_));
        port_ = std::stoi(line.substr(at + 17));
    }
    ~TbServe() {
        if (pid_ > 0) stop();
    }

    int port() const { return port_; }
    httplib::Client client() const {
        httplib::Client c("127.0.0.1", port_);
        c.set_connection_timeout(5, 0);
        c.set_read_timeout(20, 0);
        return c;
    }
    std::string log() const { return slurp(log_); }

    // SIGTERM, then the exit status (-1 if it had to be killed).
    int stop() {
        kill(pid_, SIGTERM);
        int status = 0;
        const auto deadline = Clock::now() + std::chrono::seconds(20);
        while (waitpid(pid_, &status, WNOHANG) == 0) {
            if (Clock::now() > deadline) {
                kill(pid_, SIGKILL);
                waitpid(pid_, &status, 0);
                pid_ = -1;
                return -1;
            }
            std::this_thread::sleep_for(std::chrono::milliseconds(20));
        }
        pid_ = -1;
        if (!WIFEXITED(status)) MESSAGE("tbserve ended by signal " << WTERMSIG(status));
        return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    }

    // A web folder with two files, for the explorer routes.
    static std::string web_dir() {
        static ScratchDir dir;
        static const bool written = [] {
            std::ofstream(dir.sub("index.html")) << "<!doctype html><title>explorer</title>";
            std::filesystem::create_directories(dir.sub("chessground"));
            std::ofstream(dir.sub("chessground/board.js")) << "export const board = 1;";
            return true;
        }();
        (void)written;
        return dir.path();
    }

private:
    ScratchDir dir_;
    std::string log_ = dir_.sub("stderr");
    pid_t pid_ = -1;
    int port_ = 0;
};

// Sends raw bytes on a fresh connection and returns what comes back until
// the server closes it or `wait` passes.
std::string raw_exchange(int port, const std::string& bytes, std::chrono::milliseconds wait) {
    const int fd = socket(AF_INET, SOCK_STREAM, 0);
    REQUIRE(fd >= 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<std::uint16_t>(port));
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    REQUIRE(connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0);
    if (!bytes.empty()) REQUIRE(send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL) > 0);
    std::string reply;
    const auto deadline = Clock::now() + wait;
    while (Clock::now() < deadline) {
        pollfd p{fd, POLLIN, 0};
        if (poll(&p, 1, 100) <= 0) continue;
        char buffer[4096];
        const ssize_t n = recv(fd, buffer, sizeof buffer, 0);
        if (n <= 0) break;
        reply.append(buffer, static_cast<std::size_t>(n));
    }
    close(fd);
    return reply;
}

std::vector<std::string> sample_fens(VariantId variant, const std::vector<std::string>& tables,
                                     std::size_t per_table) {
    std::vector<std::string> fens;
    for (const auto& table : tables) {
        for (const Position& pos : sample_positions(variant, table, per_table, 11)) {
            fens.push_back(to_fen(pos));
        }
    }
    return fens;
}

}  // namespace

TEST_CASE("tbserve answers like tbprobe --json for every variant") {
    TbServe server;
    auto client = server.client();
    std::size_t compared = 0;
    for (const auto& [variant, tables] : ServeDb::sampled_tables()) {
        const std::string name(variant_name(variant));
        const auto fens = sample_fens(variant, tables, kSanitized ? 4 : 15);
        std::string input;
        for (const auto& fen : fens) input += fen + "\n";
        const Run probe = run_process(
            TBF_TBPROBE, {"--db", ServeDb::get().path(), "--variant", name, "--fen", "-", "--json"},
            input);
        REQUIRE_MESSAGE(probe.rc == 0, probe.err);
        std::istringstream lines(probe.out);
        for (const auto& fen : fens) {
            CAPTURE(fen);
            std::string line;
            REQUIRE(std::getline(lines, line));
            const Json expected = parse_json(line);
            auto res = client.Get("/" + name + "?fen=" + fen_param(fen));
            REQUIRE(res);
            REQUIRE_MESSAGE(res->status == 200, res->body);
            CHECK(res->get_header_value("Content-Type") == "application/json");
            CHECK(res->get_header_value("Cache-Control") == "public, max-age=86400");
            const Json got = parse_json(res->body);
            CHECK(got["fen"] == expected["fen"]);
            CHECK(got["category"] == expected["category"]);
            CHECK(std::abs(got["dtc"].get<int>()) == expected["dtc"].get<int>());
            std::map<std::string, Json> expected_moves;
            for (const Json& m : expected["moves"]) expected_moves[m["uci"].get<std::string>()] = m;
            REQUIRE(got["moves"].size() == expected_moves.size());
            for (const Json& m : got["moves"]) {
                const Json& e = expected_moves.at(m["uci"].get<std::string>());
                CHECK(m["category"] == e["category"]);
                CHECK(std::abs(m["dtc"].get<int>()) == e["dtc"].get<int>());
                CHECK(m["conversion"] == e["conversion"]);
            }
            ++compared;
        }
    }
    CHECK(compared >= (kSanitized ? 60u : 250u));
    CHECK(server.stop() == 0);
}

TEST_CASE("malformed requests get 4xx and the server keeps serving") {
    TbServe server;
    auto client = server.client();
    const std::string fen = "8/8/8/8/8/8/8/KQ3k2_b_-_-_0_1";
    struct Case {
        std::string target;
        int status;
    };
    const Case cases[] = {
        {"/antichess?fen=8/8/8/8/8/8/8/X7_w", 400},
        {"/antichess?fen=8/8/8/8/8/8/8/KQ3k2_x", 400},
        {"/antichess?fen=8%zz", 400},
        {"/antichess?fen=8/8%2", 400},
        {"/antichess", 400},
        {"/antichess?fen=" + std::string(300, '8'), 400},
        {"/antichess?fen=" + std::string(3000, '8'), 414},
        {"/antichess?fen=" + std::string(10000, '8'), 414},
        {"/chess?fen=" + fen, 404},
        {"/chess/mainline?fen=" + fen, 404},
        {"/antichess?fen=8/8/8/8/8/8/8/KQR2k2_b", 404},
        {"/../../etc/passwd", 404},
        {"/nothing.js", 404},
    };
    for (const Case& c : cases) {
        CAPTURE(c.target.substr(0, 80));
        auto res = client.Get(c.target);
        REQUIRE(res);
        CHECK(res->status == c.status);
        const Json body = parse_json(res->body);
        CHECK(body["error"].is_string());
    }
    auto post = client.Post("/antichess?fen=" + fen, "x", "text/plain");
    REQUIRE(post);
    CHECK(post->status == 405);
    CHECK(post->get_header_value("Allow") == "GET, HEAD");
    auto big_body = client.Post("/antichess?fen=" + fen, std::string(100000, 'x'), "text/plain");
    CHECK((!big_body || big_body->status == 413));

    // Requests that are not HTTP: 400 or a closed connection, never a hang.
    for (const std::string& bytes : {std::string("BREW /antichess HTTP/1.1\r\n\r\n"),
                                    std::string("\x01\x02\x03 garbage\r\n\r\n"),
                                    std::string("GET /health HTTP/9\r\n\r\n")}) {
        const std::string reply = raw_exchange(server.port(), bytes, std::chrono::seconds(8));
        CHECK_MESSAGE((reply.empty() || reply.rfind("HTTP/1.1 4", 0) == 0), reply);
    }

    // The explorer's files, and HEAD.
    auto index = client.Get("/");
    REQUIRE(index);
    CHECK(index->status == 200);
    CHECK(index->get_header_value("Content-Type") == "text/html; charset=utf-8");
    CHECK(index->body == "<!doctype html><title>explorer</title>");
    auto js = client.Get("/chessground/board.js");
    REQUIRE(js);
    CHECK(js->get_header_value("Content-Type") == "text/javascript; charset=utf-8");
    auto head = client.Head("/antichess?fen=" + fen);
    REQUIRE(head);
    CHECK(head->status == 200);
    CHECK(head->body.empty());

    auto health = client.Get("/health");
    REQUIRE(health);
    CHECK(health->status == 200);
    CHECK(parse_json(health->body)["web"] == true);
    auto good = client.Get("/antichess?fen=" + fen);
    REQUIRE(good);
    CHECK(good->status == 200);

    CHECK(server.stop() == 0);
    // One log line per request, with method, target and status.
    const std::string log = server.log();
    std::size_t lines = 0;
    for (char c : log) lines += c == '\n';
    CHECK(lines >= std::size(cases) + 6);
    CHECK(log.find(" GET /health 200 ") != std::string::npos);
    CHECK(log.find(" POST /antichess?fen=8/8/8/8/8/8/8/KQ3k2_b_-_-_0_1 405 ") != std::string::npos);
    CHECK(log.find(" GET /chess/mainline?fen=") != std::string::npos);
}

TEST_CASE("silent clients are cut off by the read timeout") {
    // Two workers, both taken by connections that send nothing: the third
    // client is served once the read timeout (5 s) frees a worker.
    TbServe server({"--threads", "2"});
    std::vector<std::thread> silent;
    for (int i = 0; i < 2; ++i) {
        silent.emplace_back([&] { raw_exchange(server.port(), "", std::chrono::seconds(12)); });
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    auto client = server.client();
    const auto start = Clock::now();
    auto health = client.Get("/health");
    const double waited = std::chrono::duration<double>(Clock::now() - start).count();
    REQUIRE(health);
    CHECK(health->status == 200);
    CHECK(waited < 12.0);
    for (auto& t : silent) t.join();
    CHECK(server.stop() == 0);
}

TEST_CASE("a bounded load passes without errors") {
    TbServe server;
    ScratchDir dir;
    {
        std::ofstream targets(dir.sub("targets"));
        for (const auto& [variant, tables] : ServeDb::sampled_tables()) {
            for (const auto& fen : sample_fens(variant, tables, 10)) {
                targets << '/' << variant_name(variant) << "?fen=" << fen_param(fen) << '\n';
            }
        }
    }
    const std::string requests = kSanitized ? "400" : "2000";
    const Run load = run_process(TBF_SERVE_LOAD,
                                 {"--port", std::to_string(server.port()), "--targets",
                                  dir.sub("targets"), "--requests", requests, "--concurrency", "8",
                                  "--max-seconds", "60"});
    CHECK_MESSAGE(load.rc == 0, load.err);
    const Json result = parse_json(load.out);
    CHECK(result["errors"] == 0);
    CHECK(result["requests"] == std::stoi(requests));
    MESSAGE("serve_load: " << load.out);
    // Refuses anything but loopback.
    const Run outside = run_process(TBF_SERVE_LOAD, {"--host", "10.0.0.1", "--port", "80",
                                                     "--targets", dir.sub("targets")});
    CHECK(outside.rc == 2);
    CHECK(server.stop() == 0);
}
