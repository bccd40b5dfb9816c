#include "monitor/web_config.hpp"

#include <fmt/format.h>
#include <sys/stat.h>
#include <yaml-cpp/yaml.h>

#include <array>
#include <cerrno>
#include <functional>
#include <set>

#include "common/errors.hpp"
#include "common/files.hpp"

namespace ioacct {
namespace {

constexpr std::string_view kFlag = "--web.config.file";

// Every problem reads "--web.config.file: FILE: line N: what (hint)".
class Problem {
 public:
  explicit Problem(std::string_view origin) : origin_(origin) {}
  [[noreturn]] void at(const YAML::Node& n, std::string_view what) const {
    const YAML::Mark m = n.Mark();
    if (m.is_null()) throw UsageError(fmt::format("{}: {}: {}", kFlag, origin_, what));
    throw UsageError(fmt::format("{}: {}: line {}: {}", kFlag, origin_, m.line + 1, what));
  }

 private:
  std::string origin_;
};

// The keys of a mapping, each handed to `take` in file order; an unknown key
// is an error that lists the known ones.
void each_key(const Problem& p, const YAML::Node& map, std::string_view where, const std::set<std::string>& known,
              const std::function<void(const std::string&, const YAML::Node&)>& take) {
  if (map.IsNull()) return;
  if (!map.IsMap()) p.at(map, fmt::format("{} must be a mapping of keys to values", where));
  for (const auto& kv : map) {
    const auto key = kv.first.as<std::string>();
    if (!known.count(key)) {
      std::string list;
      for (const auto& k : known) list += (list.empty() ? "" : ", ") + k;
      p.at(kv.first, fmt::format("unknown key '{}' in {} (known: {})", key, where, list));
    }
    take(key, kv.second);
  }
}

std::string scalar(const Problem& p, const YAML::Node& n, std::string_view key) {
  if (!n.IsScalar()) p.at(n, fmt::format("{} must be a single value", key));
  return n.as<std::string>();
}

bool boolean(const Problem& p, const YAML::Node& n, std::string_view key) {
  bool b = false;
  if (!n.IsScalar() || !YAML::convert<bool>::decode(n, b)) p.at(n, fmt::format("{} must be true or false", key));
  return b;
}

int tls_version(const Problem& p, const YAML::Node& n, std::string_view key) {
  const std::string v = scalar(p, n, key);
  for (int minor = 10; minor <= 13; ++minor)
    if (v == fmt::format("TLS{}", minor)) return minor;
  p.at(n, fmt::format("{}: '{}' is not one of TLS10, TLS11, TLS12, TLS13", key, v));
}

std::string resolve(std::string_view dir, const std::string& path) {
  if (path.empty() || path.front() == '/' || dir.empty()) return path;
  return fmt::format("{}/{}", dir, path);
}

// One of "NAME_file" (a path) or "NAME" (inline PEM), not both.
std::optional<PemSource> pem(const Problem& p, const YAML::Node& at, const std::optional<std::string>& file,
                             const std::optional<std::string>& text, std::string_view dir, std::string_view name) {
  if (file && text) p.at(at, fmt::format("give {0}_file or {0}, not both", name));
  if (file) {
    if (file->empty()) p.at(at, fmt::format("{}_file is empty", name));
    return PemSource{resolve(dir, *file), ""};
  }
  if (text) {
    // `cert: |` with nothing under it is an empty string, not a missing key:
    // refuse it here, where the line is known, not later as a bad PEM.
    if (text->find_first_not_of(" \t\r\n") == std::string::npos) p.at(at, fmt::format("{} is empty", name));
    return PemSource{"", *text};
  }
  return std::nullopt;
}

WebTlsConfig parse_tls(const Problem& p, const YAML::Node& n, std::string_view dir) {
  std::optional<std::string> cert_file, cert, key_file, key, ca_file, ca, auth;
  WebTlsConfig t;
  const std::set<std::string> known = {"cert_file", "key_file", "cert", "key", "client_ca_file", "client_ca",
                                       "client_auth_type", "min_version", "max_version",
                                       "prefer_server_cipher_suites", "cipher_suites", "curve_preferences",
                                       "client_allowed_sans"};
  each_key(p, n, "tls_server_config", known, [&](const std::string& k, const YAML::Node& v) {
    if (k == "cert_file") cert_file = scalar(p, v, k);
    else if (k == "key_file") key_file = scalar(p, v, k);
    else if (k == "cert") cert = scalar(p, v, k);
    else if (k == "key") key = scalar(p, v, k);
    else if (k == "client_ca_file") ca_file = scalar(p, v, k);
    else if (k == "client_ca") ca = scalar(p, v, k);
    else if (k == "client_auth_type") auth = scalar(p, v, k);
    else if (k == "min_version") t.min_version = tls_version(p, v, k);
    else if (k == "max_version") t.max_version = tls_version(p, v, k);
    else if (k == "prefer_server_cipher_suites") t.prefer_server_ciphers = boolean(p, v, k);
    else  // cipher_suites, curve_preferences, client_allowed_sans
      p.at(v, fmt::format("{} is not supported by ioacct (GnuTLS's default suites and curves apply; "
                          "remove the key)", k));
  });
  auto c = pem(p, n, cert_file, cert, dir, "cert");
  auto k = pem(p, n, key_file, key, dir, "key");
  if (!c) p.at(n, "tls_server_config needs cert_file (or cert)");
  if (!k) p.at(n, "tls_server_config needs key_file (or key)");
  t.cert = std::move(*c);
  t.key = std::move(*k);
  if (t.min_version > t.max_version) p.at(n, "min_version is above max_version");
  auto client_ca = pem(p, n, ca_file, ca, dir, "client_ca");
  const std::string policy = auth.value_or("NoClientCert");
  if (policy == "RequireAndVerifyClientCert") {
    if (!client_ca) p.at(n, "client_auth_type RequireAndVerifyClientCert needs client_ca_file (or client_ca)");
    t.client_ca = std::move(client_ca);
  } else if (policy == "NoClientCert") {
    if (client_ca) p.at(n, "client_ca_file is given but client_auth_type is NoClientCert (set it to "
                           "RequireAndVerifyClientCert to check client certificates)");
  } else if (policy == "RequestClientCert" || policy == "RequireAnyClientCert" || policy == "VerifyClientCertIfGiven") {
    p.at(n, fmt::format("client_auth_type {} is not supported by ioacct (use NoClientCert or "
                        "RequireAndVerifyClientCert)", policy));
  } else {
    p.at(n, fmt::format("client_auth_type '{}' is not one of NoClientCert, RequireAndVerifyClientCert", policy));
  }
  return t;
}

// The headers exporter-toolkit lets a config set.
constexpr std::array<std::string_view, 5> kHeaders = {"Strict-Transport-Security", "X-Content-Type-Options",
                                                      "X-Frame-Options", "X-XSS-Protection", "Content-Security-Policy"};

}  // namespace

int bcrypt_cost(std::string_view h) { return is_bcrypt_hash(h) ? (h[4] - '0') * 10 + (h[5] - '0') : 0; }

bool is_bcrypt_hash(std::string_view h) {
  // $2y$10$ + 22 characters of salt + 31 of hash, in bcrypt's base64 alphabet.
  if (h.size() != 60 || h[0] != '$' || h[1] != '2' || h[3] != '$' || h[6] != '$') return false;
  if (h[2] != 'a' && h[2] != 'b' && h[2] != 'y') return false;
  if (h[4] < '0' || h[4] > '3' || h[5] < '0' || h[5] > '9') return false;
  const int cost = (h[4] - '0') * 10 + (h[5] - '0');
  if (cost < 4 || cost > 31) return false;
  for (char c : h.substr(7))
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '/'))
      return false;
  return true;
}

WebConfig parse_web_config(std::string_view yaml, std::string_view origin, std::string_view dir) {
  const Problem p(origin);
  YAML::Node root;
  try {
    root = YAML::Load(std::string(yaml));
  } catch (const YAML::Exception& e) {
    throw UsageError(fmt::format("{}: {}: line {}: not valid YAML: {}", kFlag, origin, e.mark.line + 1, e.msg));
  }
  // node_exporter serves plain HTTP for an empty file; a file given to turn
  // on TLS or passwords that came out empty (a failed template, a truncated
  // copy) would then expose the metrics without either, with no word said.
  if (root.IsNull())
    throw UsageError(fmt::format("{}: {}: is empty (nothing but blanks or comments): it sets neither "
                                 "tls_server_config nor basic_auth_users; fill it in, or leave out {} to serve "
                                 "plain HTTP on purpose",
                                 kFlag, origin, kFlag));
  WebConfig c;
  try {
    each_key(p, root, "the file", {"tls_server_config", "http_server_config", "basic_auth_users"},
             [&](const std::string& k, const YAML::Node& v) {
               if (k == "tls_server_config") {
                 if (!v.IsNull() && !(v.IsMap() && v.size() == 0)) c.tls = parse_tls(p, v, dir);
               } else if (k == "http_server_config") {
                 each_key(p, v, "http_server_config", {"http2", "headers"},
                          [&](const std::string& hk, const YAML::Node& hv) {
                            if (hk == "http2") {
                              boolean(p, hv, hk);  // HTTP/1.1 either way: Prometheus scrapes with it
                              return;
                            }
                            std::set<std::string> known(kHeaders.begin(), kHeaders.end());
                            each_key(p, hv, "headers", known, [&](const std::string& name, const YAML::Node& value) {
                              const std::string text = scalar(p, value, name);
                              // libmicrohttpd would drop such a header from every response, silently.
                              if (text.find_first_of("\r\n") != std::string::npos)
                                p.at(value, fmt::format("header {} has a line break in its value", name));
                              c.headers.emplace_back(name, text);
                            });
                          });
               } else {  // basic_auth_users
                 if (v.IsNull()) return;
                 if (!v.IsMap()) p.at(v, "basic_auth_users must map user names to bcrypt hashes");
                 for (const auto& u : v) {
                   const auto user = u.first.as<std::string>();
                   const std::string hash = scalar(p, u.second, user);
                   if (user.empty() || user.find(':') != std::string::npos)
                     p.at(u.first, fmt::format("user name '{}' is empty or has a ':'", user));
                   if (!is_bcrypt_hash(hash))
                     p.at(u.second, fmt::format("the password of '{}' is not a bcrypt hash ($2y$...; make one with "
                                                "htpasswd -nBC 10 \"\" | tr -d ':\\n')", user));
                   if (const int cost = bcrypt_cost(hash); cost > kMaxBcryptCost)
                     p.at(u.second, fmt::format("the password of '{}' has bcrypt cost {}; ioacct takes at most {} "
                                                "(cost {} is about a second of CPU per check, and each step doubles "
                                                "it): make it again with htpasswd -nBC 12", user, cost,
                                                kMaxBcryptCost, kMaxBcryptCost));
                   if (!c.users.emplace(user, hash).second)
                     p.at(u.first, fmt::format("user '{}' is given twice", user));
                 }
               }
             });
  } catch (const YAML::Exception& e) {  // a value of the wrong shape that as<>() refused
    throw UsageError(fmt::format("{}: {}: line {}: {}", kFlag, origin, e.mark.line + 1, e.msg));
  }
  return c;
}

namespace {

// The file's contents. Messages start with `prefix` ("--web.config.file: FILE: certificate CERT").
std::string read_whole(const std::string& path, const std::string& prefix) {
  std::string error;
  int err = 0;
  auto text = read_user_file(path, 1u << 20, error, kUserFileIdle, &err);
  if (text) return *std::move(text);
  if (error.starts_with("larger than")) error += ", not a configuration or PEM file";
  const std::string msg = fmt::format("{}: {}", prefix, error);
  if (err == EACCES || err == EPERM) throw RuntimeError(msg);
  throw UsageError(msg);
}

void load_pem(PemSource& s, std::string_view what, std::string_view origin) {
  if (!s.path.empty()) s.text = read_whole(s.path, fmt::format("{}: {}: {} {}", kFlag, origin, what, s.path));
  if (s.text.find("-----BEGIN ") == std::string::npos)
    throw UsageError(fmt::format("{}: {}: {} {}: not PEM (no -----BEGIN line)", kFlag, origin, what,
                                 s.path.empty() ? "(inline)" : s.path));
}

}  // namespace

WebConfig load_web_config(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode))
    throw UsageError(fmt::format("{}: {}: is a directory, not a YAML file", kFlag, path));
  const std::string text = read_whole(path, fmt::format("{}: {}", kFlag, path));
  const size_t slash = path.rfind('/');
  WebConfig c = parse_web_config(text, path, slash == std::string::npos ? "." : path.substr(0, slash));
  if (c.tls) {
    load_pem(c.tls->cert, "certificate", path);
    load_pem(c.tls->key, "key", path);
    if (c.tls->client_ca) load_pem(*c.tls->client_ca, "client CA", path);
  }
  return c;
}

}  // namespace ioacct
