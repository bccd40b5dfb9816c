#pragma once
// The HTTP(S) endpoint of `ioacct export`, on GNU libmicrohttpd.
//
// Why not prometheus-cpp's exposer (civetweb): civetweb gives each
// connection a worker thread until the request arrives, so a few idle
// connections held open starve every scrape for the request timeout; and
// Debian 12's civetweb loads OpenSSL by an unversioned name and crashes on
// the first TLS connection with OpenSSL 3. libmicrohttpd polls every
// connection from a couple of threads (epoll), so an idle or slow client
// costs a connection slot and its memory, never a thread; TLS is GnuTLS.
//
// Limits (docs/metrics.md, "Hostile clients"): connections idle for
// kIdleTimeoutS are closed, at most kMaxConnections are open at once (each
// holds at most kConnectionMemory bytes), and keep-alive connections count
// against both.
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "monitor/web_config.hpp"

struct MHD_Daemon;

namespace ioacct {

struct ListenAddress {
  std::string host;  // as given: "127.0.0.1", "[::1]"
  uint16_t port = 0;  // 0: any free port
  bool loopback = false;
};

// "ADDR:PORT", ADDR an IPv4 address or a bracketed IPv6 address (no names:
// what is bound must be plain to see). Throws UsageError("--listen: ...").
ListenAddress parse_listen_address(const std::string& text);

class WebServer {
 public:
  static constexpr unsigned kIdleTimeoutS = 10;
  static constexpr unsigned kMaxConnections = 512;
  static constexpr size_t kConnectionMemory = 32 * 1024;
  static constexpr unsigned kThreads = 2;

  // The body of /metrics; called from the server's threads, possibly two at
  // once. It must not throw.
  using Body = std::function<std::string()>;

  // Binds `addr` and serves until destroyed. Throws RuntimeError naming the
  // real cause when the address cannot be bound (in use, a privileged port
  // without CAP_NET_BIND_SERVICE, no such local address), UsageError when the
  // TLS material in `config` is unusable (a key that does not match the
  // certificate, a file that is not a certificate).
  static std::unique_ptr<WebServer> start(const ListenAddress& addr, const WebConfig& config, Body metrics);
  ~WebServer();  // stops serving; in-flight requests finish first
  WebServer(const WebServer&) = delete;
  WebServer& operator=(const WebServer&) = delete;

  uint16_t port() const { return port_; }  // the one bound (useful with port 0)

  struct Impl;  // what the request handler sees (web_server.cpp)

 private:
  WebServer() = default;
  MHD_Daemon* daemon_ = nullptr;
  uint16_t port_ = 0;
  std::unique_ptr<Impl> impl_;
};

}  // namespace ioacct
