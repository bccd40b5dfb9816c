// `ioacct export` as a fleet runs it: node_exporter's web config (TLS and
// bcrypt basic auth, checked with curl, a real TLS client), device filters,
// bounded per-process series, and an endpoint that idle or slow clients
// cannot take down (issue 19 item 5).
#include <arpa/inet.h>
#include <crypt.h>
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <fstream>
#include <memory>
#include <sstream>
#include <thread>
#include <vector>

#include "cli/exporter.hpp"
#include "cli/run_binary.hpp"

namespace ioacct::test {
namespace {

// Password "test", from Prometheus' own documentation (made by Go's bcrypt).
constexpr const char* kPromDocsHash = "$2b$12$hNf2lSsxfm0.i4a.1kVpSOVyBCfIB51VRjgBUyv6kdnyTlgWj81Ay";

// A CA, a server certificate it signed for 127.0.0.1, a client certificate
// it signed, and a stranger: a self-signed certificate from elsewhere.
struct Pki {
  explicit Pki(const std::string& d) : dir(d) {
    const std::string q = " 2>/dev/null";
    sh("cd " + d + " && openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 -subj /CN=test-ca "
       "-keyout ca.key -out ca.crt" + q);
    for (const char* who : {"server", "client"}) {
      const std::string w = who;
      sh("cd " + d + " && openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj /CN=" + w + " -keyout " +
         w + ".key -out " + w + ".csr" + q);
      sh("cd " + d + " && printf 'subjectAltName=IP:127.0.0.1\\nextendedKeyUsage=" +
         (w == "server" ? std::string("serverAuth") : std::string("clientAuth")) + "\\n' > " + w + ".ext && " +
         "openssl x509 -req -in " + w + ".csr -CA ca.crt -CAkey ca.key -CAcreateserial -days 2 -extfile " + w +
         ".ext -out " + w + ".crt" + q);
    }
    sh("cd " + d + " && openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 -subj /CN=stranger "
       "-addext subjectAltName=IP:127.0.0.1 -keyout stranger.key -out stranger.crt" + q);
  }
  std::string write(const std::string& name, const std::string& text) const {
    std::ofstream(dir + "/" + name) << text;
    return dir + "/" + name;
  }
  std::string dir;
};

// curl's HTTP status for `url` (000 when no HTTP answer came).
std::string status(const std::string& curl_args, const std::string& url) {
  return sh("curl -s -o /dev/null -w '%{http_code}' --max-time 10 " + curl_args + " " + url + " || true");
}

TEST(ExportWeb, TlsAndBcryptBasicAuthFromANodeExporterWebConfig) {
  TempDir dir;
  Pki pki(dir.path());
  // Relative paths: relative to the config file's folder, as in node_exporter.
  const std::string config = pki.write("web.yml",
                                       "tls_server_config:\n"
                                       "  cert_file: server.crt\n"
                                       "  key_file: server.key\n"
                                       "  min_version: TLS13\n"
                                       "http_server_config:\n"
                                       "  headers:\n"
                                       "    X-Frame-Options: deny\n"
                                       "basic_auth_users:\n"
                                       "  prometheus: " + std::string(kPromDocsHash) + "\n");
  Exporter ex({"--listen", "127.0.0.1:0", "--no-bpf", "--web.config.file", config});
  ASSERT_GT(ex.port(), 0) << ex.err();
  EXPECT_TRUE(ex.https());
  EXPECT_NE(ex.err().find("basic authentication"), std::string::npos) << ex.err();
  const std::string ca = "--cacert " + pki.dir + "/ca.crt";
  const std::string body = ex.scrape(ca + " -u prometheus:test");
  EXPECT_TRUE(value(body, "ioacct_exact_busy_up")) << body;
  promtool_accepts(body);
  EXPECT_EQ(status(ca + " -u prometheus:wrong", ex.url()), "401");
  EXPECT_EQ(status(ca + " -u someone:test", ex.url()), "401");
  EXPECT_EQ(status(ca, ex.url()), "401");
  EXPECT_NE(sh("curl -s -D - -o /dev/null " + ca + " " + ex.url()).find("WWW-Authenticate: Basic realm=\"ioacct\""),
            std::string::npos);
  EXPECT_NE(sh("curl -s -D - -o /dev/null " + ca + " -u prometheus:test " + ex.url()).find("X-Frame-Options: deny"),
            std::string::npos);
  // The certificate is really checked, and really served over TLS only.
  EXPECT_EQ(status("", ex.url()), "000") << "curl does not trust an unknown CA";
  EXPECT_EQ(status("--cacert " + pki.dir + "/stranger.crt -u prometheus:test", ex.url()), "000");
  EXPECT_EQ(status("-u prometheus:test", "http://127.0.0.1:" + std::to_string(ex.port()) + "/metrics"), "000");
  EXPECT_EQ(status(ca + " -u prometheus:test --tls-max 1.2", ex.url()), "000") << "min_version TLS13";
  EXPECT_EQ(status(ca + " -u prometheus:test -X POST", ex.url()), "405");
  EXPECT_EQ(status(ca + " -u prometheus:test", ex.url("/nothing")), "404");
  EXPECT_EQ(ex.stop(), 0) << ex.err();
}

// The exporter's CPU time so far, in seconds (utime + stime).
double cpu_s(pid_t pid) {
  std::istringstream in(slurp("/proc/" + std::to_string(pid) + "/stat"));
  std::string f;
  double ticks = 0;
  for (int i = 1; i <= 15 && in >> f; ++i)
    if (i >= 14) ticks += std::stod(f);
  return ticks / static_cast<double>(sysconf(_SC_CLK_TCK));
}

// A bcrypt hash of `password` at `cost`, made here with libxcrypt.
std::string bcrypt_hash(const std::string& password, int cost) {
  char salt[CRYPT_GENSALT_OUTPUT_SIZE];
  EXPECT_NE(crypt_gensalt_rn("$2b$", static_cast<unsigned long>(cost), nullptr, 0, salt, sizeof salt), nullptr);
  crypt_data data{};
  const char* h = crypt_rn(password.c_str(), salt, &data, sizeof data);
  return h ? h : "";
}

// Found by a hostile pass: an unknown user cost a cost-10 decoy (0.08 s)
// against 0.31 s for a known one with a wrong password, so timing told which
// users exist; the password was compared as a C string, so "test\0anything"
// passed; the scheme name "basic" in lower case got 401 (RFC 7617 makes it
// case-insensitive); and every bcrypt ran on one of the two serving threads,
// so wrong passwords held up every other scraper.
TEST(ExportWeb, BasicAuthTellsNoUsersApartAndWrongPasswordsHoldNoScrapeUp) {
  TempDir dir;
  const std::string slow = bcrypt_hash("slow", 14);  // about a second a check here
  ASSERT_EQ(slow.rfind("$2b$14$", 0), 0u) << slow;
  const std::string config = dir.path() + "/web.yml";
  std::ofstream(config) << "basic_auth_users:\n  prometheus: " << kPromDocsHash << "\n  slow: " << slow << "\n";
  Exporter ex({"--listen", "127.0.0.1:0", "--no-bpf", "--web.config.file", config});
  ASSERT_GT(ex.port(), 0) << ex.err();
  auto header = [](const std::string& userpass) {
    return "-H 'Authorization: " + sh("printf 'Basic %s' $(printf '" + userpass + "' | base64 -w0)") + "'";
  };
  EXPECT_EQ(status(header("prometheus:test"), ex.url()), "200");
  EXPECT_EQ(status("-H 'Authorization: basic " + sh("printf 'prometheus:test' | base64 -w0") + "'", ex.url()), "200");
  EXPECT_EQ(status("-H 'Authorization: BASIC " + sh("printf 'prometheus:test' | base64 -w0") + "'", ex.url()), "200");
  EXPECT_EQ(status(header("prometheus:test\\000anything"), ex.url()), "401") << "a NUL ends no password";
  EXPECT_EQ(status(header("prometheus\\000x:test"), ex.url()), "401");
  EXPECT_EQ(status("-H 'Authorization: Basic !!!'", ex.url()), "401");

  // An unknown user costs what the costliest configured one does (cost 14
  // here): the same bcrypt work, so the same CPU time, which unlike wall
  // time a busy machine cannot skew. The old decoy (cost 10) was 1/16 of it.
  auto cpu_of = [&](const std::string& userpass) {
    const double before = cpu_s(ex.pid());
    EXPECT_EQ(status("--max-time 30 -u " + userpass, ex.url()), "401");
    return cpu_s(ex.pid()) - before;
  };
  const double known = cpu_of("slow:wrong"), unknown = cpu_of("nobody:wrong");
  EXPECT_GT(known, 0.2) << "a cost-14 check";
  EXPECT_GT(unknown, known / 2) << "unknown user " << unknown << " s of CPU, a known one " << known << " s";
  EXPECT_LT(unknown, known * 2) << "unknown user " << unknown << " s of CPU, a known one " << known << " s";

  // Eight clients sending wrong passwords for the cost-14 user, nonstop:
  // each check holds the bcrypt thread for a second, never a serving thread,
  // so a scraper whose password passed before is answered at once.
  std::atomic<bool> flooding{true};
  std::vector<std::thread> flood;
  for (int i = 0; i < 8; ++i)
    flood.emplace_back([&] {
      while (flooding) status("--max-time 3 -u slow:guess", ex.url());
    });
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  std::vector<double> took;
  for (int i = 0; i < 10; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    EXPECT_EQ(status("-u prometheus:test", ex.url()), "200");
    took.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  flooding = false;
  for (auto& t : flood) t.join();
  std::sort(took.begin(), took.end());
  // Sharing the two serving threads with the checks, the median was a
  // check's second or more; alone, a scrape here takes ~20 ms.
  EXPECT_LT(took[took.size() / 2], 0.5) << "median scrape " << took[took.size() / 2] << " s during the flood";
  EXPECT_EQ(ex.stop(), 0) << ex.err();
}

// What a raw client gets for `request`: every byte the exporter sends until
// it closes the connection or 1 s passes without a byte.
std::string raw_http(int port, const std::string& request) {
  const int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<uint16_t>(port));
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  EXPECT_EQ(connect(s, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
  EXPECT_EQ(send(s, request.data(), request.size(), MSG_NOSIGNAL), static_cast<ssize_t>(request.size()));
  std::string out;
  pollfd p{s, POLLIN, 0};
  char buf[65536];
  while (poll(&p, 1, 1000) == 1) {
    const ssize_t n = recv(s, buf, sizeof buf, 0);
    if (n <= 0) break;
    out.append(buf, static_cast<size_t>(n));
  }
  close(s);
  return out;
}

size_t status_lines(const std::string& response) {
  size_t n = 0;
  for (size_t at = response.find("HTTP/1.1 "); at != std::string::npos; at = response.find("HTTP/1.1 ", at + 1)) ++n;
  return n;
}

// Found by a hostile pass: every response closed its connection, so five
// pipelined requests got one answer (and a Prometheus scraping many targets
// connects anew each time); "/metrics%00" was served as /metrics.
TEST(ExportWeb, KeepAliveAndPipeliningWorkAndOddRequestsGetOneAnswer) {
  Exporter ex({"--listen", "127.0.0.1:0", "--no-bpf"});
  ASSERT_GT(ex.port(), 0) << ex.err();
  const std::string verbose = sh("curl -sv -o /dev/null -o /dev/null " + ex.url() + " " + ex.url() + " 2>&1");
  EXPECT_NE(verbose.find("Re-using existing connection"), std::string::npos) << verbose;
  EXPECT_EQ(verbose.find("Connection: close"), std::string::npos) << verbose;

  std::string five;
  for (int i = 0; i < 5; ++i) five += "GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n";
  const std::string pipelined = raw_http(ex.port(), five);
  EXPECT_EQ(status_lines(pipelined), 5u) << pipelined.substr(0, 300);

  EXPECT_EQ(raw_http(ex.port(), "GET /metrics%00 HTTP/1.1\r\nHost: x\r\n\r\n").substr(0, 22), "HTTP/1.1 404 Not Found");
  EXPECT_EQ(raw_http(ex.port(), "GET /metric%73 HTTP/1.1\r\nHost: x\r\n\r\n").substr(0, 15), "HTTP/1.1 200 OK")
      << "other escapes still decode";
  const std::string body = raw_http(ex.port(), "GET / HTTP/1.1\r\nHost: x\r\nContent-Length: 999999999\r\n\r\n");
  EXPECT_EQ(body.substr(0, 24), "HTTP/1.1 400 Bad Request") << body;
  EXPECT_EQ(status_lines(body), 1u) << body;
  for (const std::string& odd : {std::string("POST /metrics HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhello"),
                                 "GET / HTTP/1.1\r\nHost: x\r\nX-Long: " + std::string(100000, 'a') + "\r\n\r\n",
                                 std::string("GARBAGE\r\n\r\n")}) {
    const std::string r = raw_http(ex.port(), odd);
    EXPECT_LE(status_lines(r), 1u) << odd.substr(0, 40) << ": " << r.substr(0, 300);
  }
  EXPECT_EQ(ex.stop(), 0) << ex.err();
}

TEST(ExportWeb, RequireAndVerifyClientCertLetsInOnlyCertificatesTheCaSigned) {
  TempDir dir;
  Pki pki(dir.path());
  const std::string config = pki.write("web.yml",
                                       "tls_server_config:\n"
                                       "  cert_file: server.crt\n"
                                       "  key_file: server.key\n"
                                       "  client_auth_type: RequireAndVerifyClientCert\n"
                                       "  client_ca_file: ca.crt\n");
  Exporter ex({"--listen", "127.0.0.1:0", "--no-bpf", "--web.config.file", config});
  ASSERT_GT(ex.port(), 0) << ex.err();
  const std::string ca = "--cacert " + pki.dir + "/ca.crt";
  EXPECT_EQ(status(ca + " --cert " + pki.dir + "/client.crt --key " + pki.dir + "/client.key", ex.url()), "200");
  EXPECT_EQ(status(ca, ex.url()), "403") << "no client certificate";
  EXPECT_EQ(status(ca + " --cert " + pki.dir + "/stranger.crt --key " + pki.dir + "/stranger.key", ex.url()), "403")
      << "a certificate the CA did not sign";
  EXPECT_EQ(ex.stop(), 0);
}

// The refusal (run_binary.hpp), and nothing else on stderr: the error line
// starts with `starts`.
void expect_one_error(const Outcome& o, int code, const std::string& starts, const std::string& has = "") {
  expect_refused(o, has.empty() ? std::vector<std::string>{starts} : std::vector<std::string>{starts, has}, code);
  EXPECT_EQ(o.err.rfind("error: " + starts, 0), 0u) << o.err;
  EXPECT_EQ(std::count(o.err.begin(), o.err.end(), '\n'), 1) << o.err;
}

TEST(ExportWeb, ABadWebConfigIsOneErrorLineBeforeAnythingIsServed) {
  TempDir dir;
  Pki pki(dir.path());
  const auto run = [&](const std::string& file) {
    return run_ioacct({"export", "--listen", "127.0.0.1:0", "--no-bpf", "--web.config.file", file});
  };
  expect_one_error(run(dir.path() + "/missing.yml"), 2, "--web.config.file: " + dir.path() + "/missing.yml: ",
                   "ENOENT");
  expect_one_error(run(pki.write("bad.yml", "tls_server_config:\n  cert_file: [server.crt\n")), 2,
                   "--web.config.file: " + dir.path() + "/bad.yml: line ", "not valid YAML");
  expect_one_error(run(pki.write("typo.yml", "basic_auth_user:\n  a: b\n")), 2,
                   "--web.config.file: " + dir.path() + "/typo.yml: line 1: unknown key 'basic_auth_user'");
  expect_one_error(run(pki.write("plain.yml", "basic_auth_users:\n  prometheus: test\n")), 2,
                   "--web.config.file: " + dir.path() + "/plain.yml: line 2: the password of 'prometheus' is not a "
                   "bcrypt hash");
  expect_one_error(run(pki.write("nocert.yml", "tls_server_config:\n  cert_file: gone.crt\n  key_file: server.key\n")),
                   2, "--web.config.file: " + dir.path() + "/nocert.yml: certificate " + dir.path() + "/gone.crt: ",
                   "ENOENT");
  expect_one_error(run(pki.write("mismatch.yml", "tls_server_config:\n  cert_file: server.crt\n  key_file: "
                                                 "stranger.key\n")),
                   2, "--web.config.file: certificate " + dir.path() + "/server.crt with key " + dir.path() +
                          "/stranger.key: ");
  expect_one_error(run(pki.write("notpem.yml", "tls_server_config:\n  cert_file: typo.yml\n  key_file: server.key\n")),
                   2, "--web.config.file: " + dir.path() + "/notpem.yml: certificate " + dir.path() + "/typo.yml: not PEM");
  expect_one_error(run(dir.path()), 2, "--web.config.file: " + dir.path() + ": is a directory");
  // An empty file (or one of blanks and comments) would have served plain
  // HTTP without a word: it is refused, and nothing listens.
  for (const char* text : {"", "# tls to come\n\n"}) {
    const std::string empty = pki.write("empty.yml", text);
    const Outcome o = run(empty);
    expect_one_error(o, 2, "--web.config.file: " + empty + ": is empty (nothing but blanks or comments)",
                     "leave out --web.config.file to serve plain HTTP on purpose");
    EXPECT_EQ(o.err.find("serving"), std::string::npos) << o.err;
    EXPECT_EQ(o.out, "");
  }
  expect_one_error(run_ioacct({"export", "--no-bpf", "--web.config.file", ""}), 2,
                   "--web.config.file: needs a value");
  // Unreadable: a file only root may read, with export running as nobody.
  const std::string secret = pki.write("secret.yml", "basic_auth_users:\n");
  sh("chmod 0600 " + secret + " && chmod 0755 " + dir.path());
  expect_one_error(run_ioacct({"export", "--listen", "127.0.0.1:0", "--no-bpf", "--web.config.file", secret},
                              {.prefix = {"/usr/bin/setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"}}),
                   1, "--web.config.file: " + secret + ": ", "EACCES");
}

// Issue 19 item 5: with civetweb, two idle connections held the exporter's
// two worker threads and every scrape timed out for 30 s.
//
// The http and the https exporter run side by side: the 10 s the server lets
// a connection idle is most of this test, and each exporter's wait runs in
// the same 10 s as the other's. The scrapes take turns, one at a time, so
// each exporter serves its 50 alone, with its own 16 idle connections held
// open, as it would with the machine to itself.
TEST(ExportWeb, IdleConnectionsHeldOpenNeitherStarveScrapesNorGrowMemory) {
  TempDir dir;
  Pki pki(dir.path());
  const std::string config = pki.write("web.yml", "tls_server_config:\n  cert_file: server.crt\n  key_file: server.key\n");
  struct Side {
    bool tls;
    std::unique_ptr<Exporter> ex;
    std::string curl;
    long rss_before = 0;
    std::vector<int> idle;
    std::chrono::steady_clock::time_point opened;
    double slowest = 0;
  };
  const auto rss_kib = [](const Exporter& ex) {
    return std::stol(sh("awk '/^VmRSS/ {print $2}' /proc/" + std::to_string(ex.pid()) + "/status"));
  };
  std::vector<Side> sides;
  for (const bool tls : {false, true}) {
    SCOPED_TRACE(tls ? "https" : "http");
    Side& side = sides.emplace_back(Side{.tls = tls});
    std::vector<std::string> args = {"--listen", "127.0.0.1:0", "--no-bpf"};
    if (tls) args.insert(args.end(), {"--web.config.file", config});
    side.ex = std::make_unique<Exporter>(args);
    ASSERT_GT(side.ex->port(), 0) << side.ex->err();
    side.curl = tls ? "--cacert " + pki.dir + "/ca.crt" : "";
    side.ex->scrape(side.curl);  // the first walk's allocations
    side.rss_before = rss_kib(*side.ex);
    for (int i = 0; i < 16; ++i) {  // connected, and never a byte sent
      const int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
      sockaddr_in a{};
      a.sin_family = AF_INET;
      a.sin_port = htons(static_cast<uint16_t>(side.ex->port()));
      a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
      ASSERT_EQ(connect(s, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
      side.idle.push_back(s);
    }
    side.opened = std::chrono::steady_clock::now();
  }
  for (int i = 0; i < 50; ++i)
    for (Side& side : sides) {
      const std::string out = sh("curl -s -o /dev/null -w '%{http_code} %{time_total}' --max-time 5 " + side.curl + " " +
                                 side.ex->url() + " || true");
      EXPECT_EQ(out.substr(0, 3), "200") << (side.tls ? "https" : "http") << " scrape " << i << ": " << out;
      side.slowest = std::max(side.slowest, std::stod(out.substr(4)));
    }
  for (Side& side : sides) {
    SCOPED_TRACE(side.tls ? "https" : "http");
    EXPECT_LT(side.slowest, 1.0) << "every scrape answered within 1 s";
    const long rss_after = rss_kib(*side.ex);
#ifndef IOACCT_BINARY_ASAN
    // Under AddressSanitizer freed memory waits in its quarantine (up to
    // 256 MiB), so RSS says nothing of the exporter's own: bounded in Release.
    EXPECT_LT(rss_after - side.rss_before, 16 * 1024) << "RSS " << side.rss_before << " KiB -> " << rss_after << " KiB";
    EXPECT_LT(rss_after, 128 * 1024) << "RSS " << rss_after << " KiB";
#else
    (void)rss_after;
#endif
  }
  for (Side& side : sides) {
    SCOPED_TRACE(side.tls ? "https" : "http");
    // The server closes them once idle for 10 s (over TLS after an alert).
    const auto deadline = side.opened + std::chrono::seconds(15);
    for (int s : side.idle) {
      bool closed = false;
      for (;;) {
        const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
        pollfd p{s, POLLIN, 0};
        if (poll(&p, 1, static_cast<int>(std::max<int64_t>(0, left.count()))) != 1) break;
        char buf[256];
        if (read(s, buf, sizeof buf) <= 0) {
          closed = true;
          break;
        }
      }
      EXPECT_TRUE(closed) << "an idle connection is still open 15 s after it was made";
      close(s);
    }
    EXPECT_EQ(side.ex->stop(), 0) << side.ex->err();
  }
}

TEST(ExportWeb, IPv6AndTheWarningsForAnOpenEndpoint) {
  {
    Exporter ex({"--listen", "[::1]:0", "--no-bpf"});
    ASSERT_GT(ex.port(), 0) << ex.err();
    EXPECT_TRUE(value(sh("curl -sS -g http://[::1]:" + std::to_string(ex.port()) + "/metrics"), "ioacct_exact_busy_up"));
    EXPECT_EQ(ex.err().find("warning"), std::string::npos) << "loopback: no warning";
  }
  {
    Exporter ex({"--listen", "0.0.0.0:0", "--no-bpf"});
    ASSERT_GT(ex.port(), 0) << ex.err();
    EXPECT_NE(ex.err().find("warning: serving on 0.0.0.0 without authentication"), std::string::npos) << ex.err();
  }
  TempDir dir;
  const std::string auth = dir.path() + "/web.yml";
  std::ofstream(auth) << "basic_auth_users:\n  prometheus: " << kPromDocsHash << "\n";
  Exporter ex({"--listen", "0.0.0.0:0", "--no-bpf", "--web.config.file", auth});
  ASSERT_GT(ex.port(), 0) << ex.err();
  EXPECT_NE(ex.err().find("warning: serving on 0.0.0.0 with basic authentication but without TLS"), std::string::npos)
      << ex.err();
  EXPECT_EQ(status("-u prometheus:test", ex.url()), "200");
}

TEST(ExportWeb, DevicesDefaultLikeNodeExporterAndRegexesChooseOthers) {
  TempDir dir;
  LoopDevice loop(dir.path());
  auto b = run_ioacct({"bench", "--ios", "50", loop.path()});  // a device that has done I/O
  ASSERT_EQ(b.exit_code, 0) << b.err;
  const std::string series = "ioacct_device_io_ticks_seconds_total{device=\"" + loop.name() + "\"}";
  {
    Exporter ex({"--listen", "127.0.0.1:0", "--no-bpf"});
    EXPECT_FALSE(value(ex.scrape(), series)) << "loop devices are left out by default";
  }
  {
    const std::string only_it = fmt::format("^{}$", loop.name());
    Exporter ex({"--listen", "127.0.0.1:0", "--no-bpf", "--device-include", only_it});
    const std::string s = ex.scrape();
    EXPECT_TRUE(value(s, series));
    EXPECT_FALSE(value(s, "ioacct_device_io_ticks_seconds_total{device=\"vda\"}")) << "only what the regex matches";
  }
  {
    Exporter ex({"--listen", "127.0.0.1:0", "--no-bpf", "--device-exclude", "^vd"});
    const std::string s = ex.scrape();
    EXPECT_TRUE(value(s, series)) << "a user's exclusion replaces the default one";
    EXPECT_FALSE(value(s, "ioacct_device_io_ticks_seconds_total{device=\"vda\"}"));
  }
  expect_one_error(run_ioacct({"export", "--no-bpf", "--device-include", "loop("}), 2,
                   "--device-include: 'loop(' is not a regular expression");
  expect_one_error(run_ioacct({"export", "--no-bpf", "--device-include", "a", "--device-exclude", "b"}), 2,
                   "--device-include and --device-exclude: give one or the other");
  expect_one_error(run_ioacct({"export", "--no-bpf", "--device-exclude", "^x", loop.path()}), 2,
                   "--device-exclude: filters the devices chosen when none are named");
}

TEST(ExportWeb, PerProcessSeriesAreBoundedAndTheRestCounted) {
  TempDir dir;
  Exporter ex({"--listen", "127.0.0.1:0", "--no-bpf", "--per-process", "--per-process-limit", "1"});
  std::string during;
  auto b = run_ioacct({"bench", "--threads", "2", "--size", "16m", "--buffered", "--runtime", "20s"},
                      {.env = {"TMPDIR=" + dir.path()},
                       .timeout_s = 60,
                       .steps = {{"ioacct bench:", [&](int pid) {
                                    // The bench's threads set up their rings as they start,
                                    // not before its first line, and a scrape serves the
                                    // rings walk that last completed (at most 250 ms old
                                    // when the walk is slow): a scrape can see one ring, or
                                    // none. Look again until both are there, as asserted.
                                    auto both = [&] {
                                      return value(during, "ioacct_rings{kind=\"syscall\"}").value_or(0) +
                                                 value(during, "ioacct_rings{kind=\"sqpoll\"}").value_or(0) >=
                                             2;
                                    };
                                    for (int i = 0; i < 25; ++i) {
                                      during = ex.scrape();
                                      if (both()) break;
                                      std::this_thread::sleep_for(std::chrono::milliseconds(200));
                                    }
                                    kill(pid, SIGINT);
                                  }}}});
  EXPECT_EQ(b.exit_code, 130) << b.err;
  const auto rings = samples(during, "ioacct_ring_sq_entries", "pid=");
  EXPECT_EQ(rings.size(), 1u) << during;
  const double all = value(during, "ioacct_rings{kind=\"syscall\"}").value_or(0) +
                     value(during, "ioacct_rings{kind=\"sqpoll\"}").value_or(0);
  EXPECT_GE(all, 2) << "the bench's two rings";
  EXPECT_EQ(value(during, "ioacct_rings_per_process_omitted"), all - 1);
  promtool_accepts(during);
  expect_one_error(run_ioacct({"export", "--no-bpf", "--per-process", "--per-process-limit", "0"}), 2,
                   "--per-process-limit: must be at least 1");
}

}  // namespace
}  // namespace ioacct::test
