#pragma once
// `ioacct export --web.config.file`: node_exporter's web configuration file
// (the Prometheus exporter-toolkit format), so that one file and one habit
// serve every exporter on a host:
//
//   tls_server_config:            # absent: plain HTTP
//     cert_file: server.crt       # or cert: <PEM text>; relative paths are
//     key_file: server.key        #   relative to the config file's folder
//     min_version: TLS12          # TLS10..TLS13 (default TLS12)
//     max_version: TLS13
//     client_auth_type: RequireAndVerifyClientCert   # or NoClientCert (default)
//     client_ca_file: ca.crt      # or client_ca: <PEM text>
//     prefer_server_cipher_suites: true
//   http_server_config:
//     http2: false                # accepted; ioacct serves HTTP/1.1 only
//     headers: {X-Frame-Options: deny}
//   basic_auth_users:
//     prometheus: $2y$10$...      # bcrypt hashes (htpasswd -nBC 10 "" | tr -d ':\n')
//
// What exporter-toolkit accepts and ioacct cannot honour (cipher_suites,
// curve_preferences, client_allowed_sans, the other client_auth_types) is
// refused by name rather than ignored. docs/metrics.md has the details.
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ioacct {

// A PEM value given inline or by path (resolved, not yet read).
struct PemSource {
  std::string path;  // "" when inline
  std::string text;  // inline PEM, or the file's contents once loaded
};

struct WebTlsConfig {
  PemSource cert, key;
  std::optional<PemSource> client_ca;  // set exactly when clients must present a certificate it signed
  int min_version = 12, max_version = 13;  // TLS 1.x: 10..13
  bool prefer_server_ciphers = true;
};

struct WebConfig {
  std::optional<WebTlsConfig> tls;
  std::map<std::string, std::string> users;  // user -> bcrypt hash; empty: no authentication
  std::vector<std::pair<std::string, std::string>> headers;  // added to every response
};

// Parses the YAML text of a web config file. Paths are resolved against
// `dir` (the file's folder) but not read. Throws UsageError naming `origin`
// (the file, as given) and the line of the first problem. Pure.
WebConfig parse_web_config(std::string_view yaml, std::string_view origin, std::string_view dir);

// Reads `path` and every file it names (certificate, key, client CA).
// Throws UsageError for a missing file or a malformed one, RuntimeError for
// one that exists but cannot be read (permissions).
WebConfig load_web_config(const std::string& path);

// True for the bcrypt hash forms crypt(3) checks: $2a$, $2b$, $2y$, cost
// 04..31, 53 characters of salt and hash.
bool is_bcrypt_hash(std::string_view hash);

// A bcrypt hash's cost (its log2 rounds), 0 for anything else.
int bcrypt_cost(std::string_view hash);

// The highest cost a configuration may use: one check of cost 14 takes
// about a second of a CPU here, and a $2b$31$ hash would hold a thread for
// days per wrong password.
inline constexpr int kMaxBcryptCost = 14;

}  // namespace ioacct
