#include "monitor/web_server.hpp"

#include <arpa/inet.h>
#include <fmt/format.h>
#include <gnutls/gnutls.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <vector>

#include "common/errors.hpp"
#include "common/files.hpp"
#include "common/units.hpp"
#include "monitor/basic_auth.hpp"

namespace ioacct {

ListenAddress parse_listen_address(const std::string& text) {
  const auto bad = [&](std::string_view why) {
    return UsageError(fmt::format("--listen: '{}' {} (give ADDR:PORT, e.g. 127.0.0.1:19464 or [::1]:19464)", text, why));
  };
  const size_t colon = text.rfind(':');
  if (colon == std::string::npos || colon + 1 == text.size()) throw bad("has no port");
  ListenAddress l;
  l.host = text.substr(0, colon);
  const uint64_t port = parse_count("--listen", text.substr(colon + 1));
  if (port > 65535) throw bad("has a port above 65535");
  l.port = static_cast<uint16_t>(port);
  in_addr v4{};
  in6_addr v6{};
  if (l.host.size() > 2 && l.host.front() == '[' && l.host.back() == ']' &&
      inet_pton(AF_INET6, l.host.substr(1, l.host.size() - 2).c_str(), &v6) == 1) {
    l.loopback = IN6_IS_ADDR_LOOPBACK(&v6);
  } else if (inet_pton(AF_INET, l.host.c_str(), &v4) == 1) {
    l.loopback = (ntohl(v4.s_addr) >> 24) == 127;
  } else {
    throw bad("is not an IPv4 address or a bracketed IPv6 address");
  }
  return l;
}

namespace {

// Binds and listens ourselves, so that a failure names its errno (civetweb
// and libmicrohttpd only say "could not bind").
int bind_listen(const ListenAddress& a) {
  sockaddr_storage ss{};
  socklen_t len = 0;
  int family = AF_INET;
  if (a.host.front() == '[') {
    family = AF_INET6;
    auto* s6 = reinterpret_cast<sockaddr_in6*>(&ss);
    s6->sin6_family = AF_INET6;
    s6->sin6_port = htons(a.port);
    inet_pton(AF_INET6, a.host.substr(1, a.host.size() - 2).c_str(), &s6->sin6_addr);
    len = sizeof *s6;
  } else {
    auto* s4 = reinterpret_cast<sockaddr_in*>(&ss);
    s4->sin_family = AF_INET;
    s4->sin_port = htons(a.port);
    inet_pton(AF_INET, a.host.c_str(), &s4->sin_addr);
    len = sizeof *s4;
  }
  const std::string where = fmt::format("--listen: cannot listen on {}:{}", a.host, a.port);
  const int fd = ::socket(family, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) throw RuntimeError(fmt::format("{}: socket: {}", where, errno_text(errno)));
  const int one = 1;
  // A restarted exporter gets its port back while old connections linger in TIME_WAIT.
  ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  if (family == AF_INET6) ::setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof one);
  if (::bind(fd, reinterpret_cast<sockaddr*>(&ss), len) != 0 || ::listen(fd, 128) != 0) {
    const int err = errno;
    ::close(fd);
    if (err == EADDRINUSE)
      throw RuntimeError(fmt::format("{}: the port is in use by another socket (ss -ltnp 'sport = :{}' shows "
                                     "which process; pick another port)", where, a.port));
    if (err == EACCES) {
      const std::string start = read_first_line("/proc/sys/net/ipv4/ip_unprivileged_port_start");
      throw RuntimeError(fmt::format("{}: permission denied: ports below {} (net.ipv4.ip_unprivileged_port_start) "
                                     "need root or CAP_NET_BIND_SERVICE; run with that capability or pick a port "
                                     "of {} or above", where, start.empty() ? "1024" : start,
                                     start.empty() ? "1024" : start));
    }
    if (err == EADDRNOTAVAIL)
      throw RuntimeError(fmt::format("{}: no network interface here has address {} (see ip addr)", where, a.host));
    throw RuntimeError(fmt::format("{}: {}", where, errno_text(err)));
  }
  return fd;
}

uint16_t bound_port(int fd) {
  sockaddr_storage ss{};
  socklen_t len = sizeof ss;
  if (::getsockname(fd, reinterpret_cast<sockaddr*>(&ss), &len) != 0) return 0;
  if (ss.ss_family == AF_INET6) return ntohs(reinterpret_cast<sockaddr_in6*>(&ss)->sin6_port);
  return ntohs(reinterpret_cast<sockaddr_in*>(&ss)->sin_port);
}

// The certificate and key must load together (and the CA, when clients must
// present certificates); GnuTLS says what is wrong where libmicrohttpd would
// only fail to start.
void check_tls(const WebTlsConfig& t) {
  gnutls_certificate_credentials_t cred = nullptr;
  if (gnutls_certificate_allocate_credentials(&cred) < 0) throw RuntimeError("TLS: cannot allocate credentials");
  const auto datum = [](const std::string& s) {
    return gnutls_datum_t{reinterpret_cast<unsigned char*>(const_cast<char*>(s.data())), static_cast<unsigned>(s.size())};
  };
  const gnutls_datum_t cert = datum(t.cert.text), key = datum(t.key.text);
  int rc = gnutls_certificate_set_x509_key_mem(cred, &cert, &key, GNUTLS_X509_FMT_PEM);
  std::string problem;
  if (rc < 0)
    problem = fmt::format("certificate {} with key {}: {}", t.cert.path.empty() ? "(inline)" : t.cert.path,
                          t.key.path.empty() ? "(inline)" : t.key.path, gnutls_strerror(rc));
  if (problem.empty() && t.client_ca) {
    const gnutls_datum_t ca = datum(t.client_ca->text);
    rc = gnutls_certificate_set_x509_trust_mem(cred, &ca, GNUTLS_X509_FMT_PEM);
    if (rc <= 0)
      problem = fmt::format("client CA {}: {}", t.client_ca->path.empty() ? "(inline)" : t.client_ca->path,
                            rc < 0 ? gnutls_strerror(rc) : "no certificate in it");
  }
  gnutls_certificate_free_credentials(cred);
  if (!problem.empty()) throw UsageError(fmt::format("--web.config.file: {}", problem));
}

std::string priorities(const WebTlsConfig& t) {
  std::string p = "NORMAL:-VERS-ALL";
  for (int v = t.max_version; v >= t.min_version; --v) p += fmt::format(":+VERS-TLS1.{}", v - 10);
  if (t.prefer_server_ciphers) p += ":%SERVER_PRECEDENCE";
  return p;
}

}  // namespace

struct WebServer::Impl {
  WebConfig config;
  Body metrics;
  std::string priorities;
  std::mutex log_mu;
  bool started = false;     // under log_mu
  std::string start_error;  // what libmicrohttpd logged first, before started (under log_mu)
  std::unique_ptr<BasicAuth> auth;  // set when the config has users
};

namespace {

MHD_Result respond(MHD_Connection* c, const WebConfig& config, unsigned status, const std::string& body,
                   const char* type, bool auth_challenge = false) {
  MHD_Response* r = MHD_create_response_from_buffer(body.size(), const_cast<char*>(body.data()), MHD_RESPMEM_MUST_COPY);
  if (!r) return MHD_NO;
  MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, type);
  for (const auto& [name, value] : config.headers) MHD_add_response_header(r, name.c_str(), value.c_str());
  if (status == MHD_HTTP_METHOD_NOT_ALLOWED) MHD_add_response_header(r, MHD_HTTP_HEADER_ALLOW, "GET, HEAD");
  const MHD_Result rc = auth_challenge ? MHD_queue_basic_auth_fail_response(c, "ioacct", r) : MHD_queue_response(c, status, r);
  MHD_destroy_response(r);
  return rc;
}

// A client certificate signed by the configured CA, checked by GnuTLS
// against the trust list libmicrohttpd loaded from MHD_OPTION_HTTPS_MEM_TRUST.
bool client_certificate_ok(MHD_Connection* c) {
  const MHD_ConnectionInfo* info = MHD_get_connection_info(c, MHD_CONNECTION_INFO_GNUTLS_SESSION);
  if (!info || !info->tls_session) return false;
  auto* session = static_cast<gnutls_session_t>(info->tls_session);
  unsigned status = 0;
  return gnutls_certificate_verify_peers2(session, &status) == 0 && status == 0;
}

// A request's state across libmicrohttpd's calls. The first call only says
// that a request began: a response queued then, before the request has been
// read to its end, makes libmicrohttpd close the connection, and a
// Prometheus that scrapes many targets wants to keep it. The auth verdict
// survives the suspension while the bcrypt thread checks it.
struct RequestState {
  bool auth_asked = false;
  std::atomic<int> verdict{0};  // 0 waiting, 1 passed, 2 failed, 3 too many waiting
};

void request_done(void* /*cls*/, MHD_Connection* /*c*/, void** req_cls, MHD_RequestTerminationCode /*why*/) {
  delete static_cast<RequestState*>(*req_cls);
  *req_cls = nullptr;
}

int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// libmicrohttpd's own unescaping turns %00 into a NUL, and the handler,
// which gets a C string, would then read "/metrics%00" as "/metrics". %00 is
// left as it came, so such a path is simply not found.
size_t unescape(void* /*cls*/, MHD_Connection* /*c*/, char* s) {
  char* w = s;
  for (const char* r = s; *r != '\0';) {
    if (r[0] == '%' && hex_digit(r[1]) >= 0 && hex_digit(r[2]) >= 0) {
      const int v = hex_digit(r[1]) * 16 + hex_digit(r[2]);
      if (v != 0) {
        *w++ = static_cast<char>(v);
        r += 3;
        continue;
      }
    }
    *w++ = *r++;
  }
  *w = '\0';
  return static_cast<size_t>(w - s);
}

MHD_Result on_request(void* cls, MHD_Connection* c, const char* url, const char* method, const char* /*version*/,
                      const char* /*upload*/, size_t* upload_size, void** req_cls) {
  auto* impl = static_cast<WebServer::Impl*>(cls);
  const WebConfig& config = impl->config;
  const bool get = std::strcmp(method, MHD_HTTP_METHOD_GET) == 0 || std::strcmp(method, MHD_HTTP_METHOD_HEAD) == 0;
  // Anything but GET and HEAD, or a GET with a body, is answered at once: the
  // connection then closes, and no body is read, however long it claims to be.
  if (!get) {
    *upload_size = 0;
    return respond(c, config, MHD_HTTP_METHOD_NOT_ALLOWED, "only GET and HEAD\n", "text/plain; charset=utf-8");
  }
  auto* state = static_cast<RequestState*>(*req_cls);
  if (!state) {
    const char* length = MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH);
    if ((length && std::strcmp(length, "0") != 0) ||
        MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_TRANSFER_ENCODING))
      return respond(c, config, MHD_HTTP_BAD_REQUEST, "a GET has no body\n", "text/plain; charset=utf-8");
    *req_cls = new RequestState;
    return MHD_YES;
  }
  if (*upload_size != 0) {
    *upload_size = 0;
    return respond(c, config, MHD_HTTP_BAD_REQUEST, "a GET has no body\n", "text/plain; charset=utf-8");
  }
  if (config.tls && config.tls->client_ca && !client_certificate_ok(c))
    return respond(c, config, MHD_HTTP_FORBIDDEN, "a client certificate signed by the configured CA is required\n",
                   "text/plain; charset=utf-8");
  if (impl->auth) {
    if (!state->auth_asked) {
      state->auth_asked = true;
      const char* header = MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_AUTHORIZATION);
      const auto creds = header ? parse_basic_authorization(header) : std::nullopt;
      if (!creds) return respond(c, config, MHD_HTTP_UNAUTHORIZED, "Unauthorized\n", "text/plain; charset=utf-8", true);
      if (const auto quick = impl->auth->quick(*creds)) {
        state->verdict = *quick ? 1 : 2;
      } else {
        // Suspended before it is queued, so the resume can never come first.
        MHD_suspend_connection(c);
        const bool queued = impl->auth->enqueue(*creds, [c, state](bool ok) {
          state->verdict = ok ? 1 : 2;
          MHD_resume_connection(c);
        });
        if (queued) return MHD_YES;
        state->verdict = 3;
        MHD_resume_connection(c);
        return MHD_YES;
      }
    }
    if (state->verdict == 0) return MHD_YES;  // called again before the bcrypt thread answered
    if (state->verdict == 3)
      return respond(c, config, MHD_HTTP_SERVICE_UNAVAILABLE, "too many passwords waiting to be checked; try again\n",
                     "text/plain; charset=utf-8");
    if (state->verdict != 1)
      return respond(c, config, MHD_HTTP_UNAUTHORIZED, "Unauthorized\n", "text/plain; charset=utf-8", true);
  }
  const std::string_view path(url);
  if (path == "/metrics") return respond(c, config, MHD_HTTP_OK, impl->metrics(), "text/plain; version=0.0.4; charset=utf-8");
  if (path == "/")
    return respond(c, config, MHD_HTTP_OK,
                   "<html><head><title>ioacct exporter</title></head><body><h1>ioacct exporter</h1>"
                   "<p><a href=\"metrics\">Metrics</a></p></body></html>\n",
                   "text/html; charset=utf-8");
  return respond(c, config, MHD_HTTP_NOT_FOUND, "not found: the metrics are at /metrics\n", "text/plain; charset=utf-8");
}

// libmicrohttpd's error log: the first message before the server is up
// explains a failed start; later ones (a scanner's broken handshake) are not
// ioacct's to print.
void log_to(void* cls, const char* fmt_text, va_list ap) {
  auto* impl = static_cast<WebServer::Impl*>(cls);
  const std::lock_guard lock(impl->log_mu);
  if (impl->started || !impl->start_error.empty()) return;
  char buf[512];
  vsnprintf(buf, sizeof buf, fmt_text, ap);
  impl->start_error = buf;
  while (!impl->start_error.empty() && impl->start_error.back() == '\n') impl->start_error.pop_back();
}

}  // namespace

std::unique_ptr<WebServer> WebServer::start(const ListenAddress& addr, const WebConfig& config, Body metrics) {
  if (config.tls) check_tls(*config.tls);
  std::unique_ptr<WebServer> s(new WebServer());
  s->impl_ = std::make_unique<Impl>();
  Impl& impl = *s->impl_;
  impl.config = config;
  impl.metrics = std::move(metrics);
  if (!config.users.empty()) impl.auth = std::make_unique<BasicAuth>(config.users);
  const int fd = bind_listen(addr);
  s->port_ = bound_port(fd);
  std::vector<MHD_OptionItem> opts = {
      {MHD_OPTION_LISTEN_SOCKET, fd, nullptr},
      {MHD_OPTION_CONNECTION_TIMEOUT, kIdleTimeoutS, nullptr},
      {MHD_OPTION_CONNECTION_LIMIT, kMaxConnections, nullptr},
      {MHD_OPTION_CONNECTION_MEMORY_LIMIT, static_cast<intptr_t>(kConnectionMemory), nullptr},
      {MHD_OPTION_THREAD_POOL_SIZE, kThreads, nullptr},
      {MHD_OPTION_EXTERNAL_LOGGER, reinterpret_cast<intptr_t>(&log_to), &impl},
      {MHD_OPTION_NOTIFY_COMPLETED, reinterpret_cast<intptr_t>(&request_done), nullptr},
      {MHD_OPTION_UNESCAPE_CALLBACK, reinterpret_cast<intptr_t>(&unescape), nullptr},
  };
  unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL | MHD_USE_ERROR_LOG | MHD_ALLOW_SUSPEND_RESUME;
  if (impl.config.tls) {
    const WebTlsConfig& t = *impl.config.tls;
    flags |= MHD_USE_TLS;
    impl.priorities = priorities(t);
    opts.push_back({MHD_OPTION_HTTPS_MEM_KEY, 0, const_cast<char*>(t.key.text.c_str())});
    opts.push_back({MHD_OPTION_HTTPS_MEM_CERT, 0, const_cast<char*>(t.cert.text.c_str())});
    opts.push_back({MHD_OPTION_HTTPS_PRIORITIES, 0, const_cast<char*>(impl.priorities.c_str())});
    if (t.client_ca) opts.push_back({MHD_OPTION_HTTPS_MEM_TRUST, 0, const_cast<char*>(t.client_ca->text.c_str())});
  }
  opts.push_back({MHD_OPTION_END, 0, nullptr});
  s->daemon_ = MHD_start_daemon(flags, 0, nullptr, nullptr, &on_request, &impl, MHD_OPTION_ARRAY,
                                opts.data(), MHD_OPTION_END);
  const std::lock_guard lock(impl.log_mu);
  if (!s->daemon_) {
    ::close(fd);
    throw RuntimeError(fmt::format("--listen: cannot serve on {}:{}: {}", addr.host, s->port_,
                                   impl.start_error.empty() ? "libmicrohttpd did not start" : impl.start_error));
  }
  impl.started = true;
  return s;
}

WebServer::~WebServer() {
  // Every suspended request is resumed (answered as failed) before the
  // daemon stops: libmicrohttpd may not stop with one still suspended.
  if (impl_) impl_->auth.reset();
  if (daemon_) MHD_stop_daemon(daemon_);  // closes the listening socket too
}

}  // namespace ioacct
