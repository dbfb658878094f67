// Several processes: a writer killed with SIGKILL part-way must leave the
// database readable with the interrupted table absent (or its previous
// version intact), and readers in other processes work beside a writer.

#include <doctest/doctest.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <random>
#include <thread>

#include "storage_support.hpp"
#include "tbforge/storage/database.hpp"
#include "scratch_db.hpp"
#include "test_support.hpp"

using namespace tbf;
using namespace tbf::storage;
using tbf::test::numbered;
using tbf::test::TempDir;
using tbf::test::write_synthetic;

namespace {

using test::open_rw;

void check_table(const Database& db, const std::string& name, std::uint64_t seed) {
    CAPTURE(name);
    auto reader = db.open_table(name);
    REQUIRE_MESSAGE(reader.ok(), reader.status().to_string());
    auto bad = tbf::test::count_mismatches(*reader, seed);
    REQUIRE_MESSAGE(bad.ok(), bad.status().to_string());
    CHECK(*bad == 0);
    CHECK(reader->verify().ok());
}

// A pipe whose write end the child inherits (fd number passed as argument).
struct Pipe {
    int fds[2] = {-1, -1};
    Pipe() { REQUIRE(pipe(fds) == 0); }
    ~Pipe() {
        for (int fd : fds) {
            if (fd >= 0) close(fd);
        }
    }
    // After the fork: the parent keeps only the read end, so that read()
    // returns 0 if the child dies without signalling.
    void close_write_end() {
        close(fds[1]);
        fds[1] = -1;
    }
    // True if the child wrote its byte, false on end of file.
    bool wait_signal() {
        char byte = 0;
        return read(fds[0], &byte, 1) == 1;
    }
};

// Runs `storage_child write ...` and kills it after it reports `blocks`
// blocks written.
void kill_writer_midway(const std::string& path, const std::string& name, std::uint64_t seed,
                        std::uint64_t blocks, bool replace) {
    Pipe p;
    const pid_t pid = tbf::test::spawn_child({"write", path, name, "2", std::to_string(seed),
                                              std::to_string(p.fds[1]), std::to_string(blocks),
                                              replace ? "1" : "0"});
    REQUIRE(pid > 0);
    p.close_write_end();
    const bool signalled = p.wait_signal();
    kill(pid, SIGKILL);
    CHECK(tbf::test::wait_child(pid) == -SIGKILL);
    REQUIRE(signalled);
}

std::size_t staging_files(const std::string& path) {
    std::size_t n = 0;
    for ([[maybe_unused]] const auto& e :
         std::filesystem::directory_iterator(path + "/tbf-staging")) {
        ++n;
    }
    return n;
}

}  // namespace

TEST_CASE("a writer killed part-way leaves earlier tables intact and the new one absent") {
    TempDir dir;
    const std::string path = dir.sub("db");
    {
        Database db = open_rw(path);
        REQUIRE(write_synthetic(db, "a", 100000, 1, 70).ok());
        REQUIRE(write_synthetic(db, "b", 150000, 2, 71).ok());
    }
    kill_writer_midway(path, "big", 72, tbf::test::kSanitized ? 20 : 200, false);
    CHECK(staging_files(path) > 0);  // the killed writer's half-written file

    {
        auto ro = Database::open(path);
        REQUIRE_MESSAGE(ro.ok(), ro.status().to_string());
        CHECK(ro->open_table("big").status().code() == StatusCode::NotFound);
        check_table(*ro, "a", 70);
        check_table(*ro, "b", 71);
    }
    Database db = open_rw(path);
    CHECK(staging_files(path) == 0);  // cleared by the read-write open
    auto list = db.list_tables();
    REQUIRE(list.ok());
    CHECK(list->size() == 2);
    // Still writable, and the name is free.
    REQUIRE(write_synthetic(db, "big", 50000, 2, 73).ok());
    check_table(db, "big", 73);
    check_table(db, "a", 70);
}

TEST_CASE("an interrupted replace leaves the old version intact") {
    TempDir dir;
    const std::string path = dir.sub("db");
    {
        Database db = open_rw(path);
        REQUIRE(write_synthetic(db, "t", 120000, 2, 80).ok());
    }
    kill_writer_midway(path, "t", 81, tbf::test::kSanitized ? 10 : 100, true);
    auto ro = Database::open(path);
    REQUIRE(ro.ok());
    auto info = ro->table_info("t");
    REQUIRE(info.ok());
    CHECK(info->spec.slot_count == 120000);
    check_table(*ro, "t", 80);
}

TEST_CASE("killed at random moments, every visible table is complete") {
    TempDir dir;
    const std::string path = dir.sub("db");
    { Database db = open_rw(path); }
    std::mt19937 rng(99);
    const int rounds = tbf::test::kSanitized ? 3 : 6;
    for (int round = 0; round < rounds; ++round) {
        CAPTURE(round);
        Pipe p;
        const pid_t pid = tbf::test::spawn_child(
            {"churn", path, std::to_string(p.fds[1]), std::to_string(round * 100000)});
        REQUIRE(pid > 0);
        p.close_write_end();
        REQUIRE(p.wait_signal());
        // Somewhere inside a later write, commit or replace.
        std::this_thread::sleep_for(std::chrono::milliseconds(rng() % 400));
        kill(pid, SIGKILL);
        CHECK(tbf::test::wait_child(pid) == -SIGKILL);

        // Every table present holds exactly its values (seed = slot count),
        // whichever version of "churn-base" survived.
        for (const OpenMode mode : {OpenMode::ReadOnly, OpenMode::ReadWrite}) {
            DatabaseOptions o;
            o.mode = mode;
            auto db = Database::open(path, o);
            REQUIRE_MESSAGE(db.ok(), db.status().to_string());
            auto tables = db->list_tables();
            REQUIRE(tables.ok());
            CHECK(tables->size() >= 1);
            for (const TableInfo& t : *tables) check_table(*db, t.spec.name, t.spec.slot_count);
        }
    }
}

TEST_CASE("reader processes open and read while a writer is open and writing") {
    TempDir dir;
    const std::string path = dir.sub("db");
    Database db = open_rw(path);
    REQUIRE(write_synthetic(db, "shared", 100000, 2, 90).ok());
    const int opens = tbf::test::kSanitized ? 5 : 20;
    std::vector<pid_t> readers;
    for (int i = 0; i < 2; ++i) {
        readers.push_back(
            tbf::test::spawn_child({"read", path, "shared", "90", std::to_string(opens)}));
        REQUIRE(readers.back() > 0);
    }
    // Until the readers are done, the writer publishes, replaces and deletes
    // other tables, so that files come and go under the readers' opens.
    TableWriteOptions replace;
    replace.replace = true;
    std::vector<int> results;
    for (int i = 0; results.size() < readers.size(); ++i) {
        REQUIRE(write_synthetic(db, numbered("busy", i % 3), 20000 + i, 1, 91 + i, replace).ok());
        if (i % 4 == 3) REQUIRE(db.delete_table(numbered("busy", i % 3)).ok());
        for (pid_t& pid : readers) {
            int status = 0;
            if (pid > 0 && waitpid(pid, &status, WNOHANG) == pid) {
                results.push_back(WIFEXITED(status) ? WEXITSTATUS(status) : -1);
                pid = 0;
            }
        }
    }
    for (int r : results) CHECK(r == 0);
    check_table(db, "shared", 90);
}
