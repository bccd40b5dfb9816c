// `ioacct export` under the load a hostile pass put on it (issue 30), all at
// once: 1,000 io_uring rings of another user (one of them SQPOLL), 300
// slowloris connections that each send a header byte every 2 s and never
// finish, and 50 scrapers at Prometheus' pace (one scrape a second each) on
// connections they keep. Every scrape must answer, within 1 s, and the
// exporter's RSS must stay flat.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "cli/exporter.hpp"
#include "cli/ring_holder.hpp"
#include "cli/run_binary.hpp"

namespace ioacct::test {
namespace {

using Clock = std::chrono::steady_clock;

int connect_to(int port) {
  const int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<uint16_t>(port));
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (connect(s, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
    close(s);
    return -1;
  }
  return s;
}

// One scrape on a kept connection: the status code, or 0 when the answer
// did not come whole within `limit`.
int scrape_on(int s, std::chrono::milliseconds limit) {
  static const std::string kRequest = "GET /metrics HTTP/1.1\r\nHost: ioacct\r\n\r\n";
  if (send(s, kRequest.data(), kRequest.size(), MSG_NOSIGNAL) != static_cast<ssize_t>(kRequest.size())) return 0;
  const auto until = Clock::now() + limit;
  std::string in;
  char buf[65536];
  for (;;) {
    const size_t head = in.find("\r\n\r\n");
    if (head != std::string::npos) {
      const size_t cl = in.find("Content-Length: ");
      if (cl != std::string::npos && cl < head) {
        const size_t length = std::stoul(in.substr(cl + 16));
        if (in.size() >= head + 4 + length) return std::stoi(in.substr(9, 3));
      }
    }
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(until - Clock::now()).count();
    pollfd p{s, POLLIN, 0};
    if (left <= 0 || poll(&p, 1, static_cast<int>(left)) != 1) return 0;
    const ssize_t n = recv(s, buf, sizeof buf, 0);
    if (n <= 0) return 0;
    in.append(buf, static_cast<size_t>(n));
  }
}

long rss_kib(pid_t pid) {
  return std::stol(sh("awk '/^VmRSS/ {print $2}' /proc/" + std::to_string(pid) + "/status"));
}

TEST(ExportLoad, FiftyScrapersBesideThreeHundredSlowClientsAndAThousandRings) {
  RingHolder holder(999);
  ASSERT_TRUE(holder.ready()) << holder.why();
  Exporter ex({"--listen", "127.0.0.1:0"});
  ASSERT_GT(ex.port(), 0) << ex.err();
  ex.scrape();  // the first walk's allocations

  std::vector<int> slow;
  for (int i = 0; i < 300; ++i) {
    const int s = connect_to(ex.port());
    ASSERT_GE(s, 0) << "slow connection " << i;
    const std::string start = "GET /metrics HTTP/1.1\r\nHost: ioacct\r\n";
    ASSERT_EQ(send(s, start.data(), start.size(), MSG_NOSIGNAL), static_cast<ssize_t>(start.size()));
    slow.push_back(s);
  }
  std::atomic<bool> done{false};
  std::thread dribble([&] {  // a header byte every 2 s each, never the end of the header
    while (!done) {
      for (int s : slow) send(s, "X", 1, MSG_NOSIGNAL | MSG_DONTWAIT);
      for (int i = 0; i < 20 && !done; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
  });

  constexpr int kScrapers = 50, kRounds = 10;
  std::mutex mu;
  std::vector<double> took;
  std::vector<std::string> failed;
  // The 1 s target is the Release build's; under ASan ten times it (the
  // reasons are below, where it is checked).
#ifdef IOACCT_BINARY_ASAN
  constexpr double kSlowest = 10.0;
#else
  constexpr double kSlowest = 1.0;
#endif

  std::vector<std::thread> scrapers;
  long rss_warm = 0;
  for (int k = 0; k < kScrapers; ++k)
    scrapers.emplace_back([&, k] {
      // Spread over the second, as Prometheus spreads its targets' scrapes.
      std::this_thread::sleep_for(std::chrono::milliseconds(k * 1000 / kScrapers));
      int s = connect_to(ex.port());
      for (int round = 0; round < kRounds; ++round) {
        const auto t0 = Clock::now();
        // The client waits past the bound on the slowest scrape (below), so a
        // slow answer fails that bound, with its time, rather than this one.
        const int status = s >= 0 ? scrape_on(s, std::chrono::milliseconds(static_cast<int>(kSlowest * 1000) + 5000)) : 0;
        const double seconds = std::chrono::duration<double>(Clock::now() - t0).count();
        {
          const std::lock_guard lock(mu);
          took.push_back(seconds);
          if (status != 200)
            failed.push_back("scraper " + std::to_string(k) + " round " + std::to_string(round) + ": status " +
                             std::to_string(status) + " after " + std::to_string(seconds) + " s");
        }
        if (status != 200) {  // a closed or broken connection: the next round opens another
          if (s >= 0) close(s);
          s = connect_to(ex.port());
        }
        std::this_thread::sleep_until(t0 + std::chrono::seconds(1));
      }
      if (s >= 0) close(s);
    });
  std::this_thread::sleep_for(std::chrono::milliseconds(2500));
  rss_warm = rss_kib(ex.pid());  // every scraper connected and served twice
  for (auto& t : scrapers) t.join();
  const long rss_end = rss_kib(ex.pid());
  done = true;
  dribble.join();
  for (int s : slow) close(s);

  EXPECT_TRUE(failed.empty()) << failed.size() << " of " << took.size() << " scrapes failed; first: " << failed.front();
  std::sort(took.begin(), took.end());
  ASSERT_EQ(took.size(), static_cast<size_t>(kScrapers * kRounds));
  // The 1 s target is the Release build's (here: median 3-4 ms, slowest
  // 50-140 ms, quiet or beside a spinner). Under ASan a scrape costs about
  // ten times as much CPU (median 27 ms against 2.9 ms, one right after the
  // other), and beside a spinner its slowest was 0.9-1.7 s, and 3.3 s on
  // 2026-12-05 (median 0.95 s; the client's old 5 s wait failed 17 of 500
  // once, beside a spinner and the browser test): there the bound is ten
  // times the target, and what this build adds is that every scrape is
  // answered under the load with no memory error.
  EXPECT_LE(took.back(), kSlowest) << "the slowest of " << took.size() << " scrapes; median " << took[took.size() / 2];
#ifndef IOACCT_BINARY_ASAN
  // ASan keeps freed memory in its quarantine (up to 256 MiB): RSS says
  // nothing of the exporter's own there, so it is checked in Release.
  EXPECT_LE(rss_end, rss_warm + rss_warm / 10) << "RSS " << rss_warm << " KiB -> " << rss_end << " KiB";
#else
  (void)rss_warm;
  (void)rss_end;
#endif
  std::printf("%zu scrapes: median %.1f ms, slowest %.1f ms; RSS %ld -> %ld KiB\n", took.size(),
              took[took.size() / 2] * 1e3, took.back() * 1e3, rss_warm, rss_end);
  const std::string last = ex.scrape();
  EXPECT_GE(value(last, "ioacct_rings{kind=\"syscall\"}").value_or(0), 999) << "the rings were there all along";
  EXPECT_EQ(ex.stop(), 0) << ex.err();
}

}  // namespace
}  // namespace ioacct::test
