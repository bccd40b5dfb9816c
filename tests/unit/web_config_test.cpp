// parse_web_config(): node_exporter's web config file, read the way
// exporter-toolkit reads it, and every problem one UsageError naming the
// file, the line and the key.
#include <gtest/gtest.h>

#include "common/errors.hpp"
#include "monitor/web_config.hpp"

namespace ioacct {
namespace {

// The example from Prometheus' own documentation ("test", bcrypt cost 12,
// made by Go's bcrypt): an independent witness of the hash format.
constexpr const char* kPromDocsHash = "$2b$12$hNf2lSsxfm0.i4a.1kVpSOVyBCfIB51VRjgBUyv6kdnyTlgWj81Ay";

std::string problem(std::string_view yaml) {
  try {
    parse_web_config(yaml, "web.yml", "/etc/ioacct");
  } catch (const UsageError& e) {
    return e.what();
  }
  return "(accepted)";
}

TEST(WebConfig, NodeExportersExampleParses) {
  const WebConfig c = parse_web_config(
      "tls_server_config:\n"
      "  cert_file: server.crt\n"
      "  key_file: /srv/tls/server.key\n"
      "  min_version: TLS13\n"
      "http_server_config:\n"
      "  http2: false\n"
      "  headers:\n"
      "    X-Frame-Options: deny\n"
      "basic_auth_users:\n"
      "  prometheus: " + std::string(kPromDocsHash) + "\n",
      "web.yml", "/etc/ioacct");
  ASSERT_TRUE(c.tls);
  EXPECT_EQ(c.tls->cert.path, "/etc/ioacct/server.crt") << "relative to the file's folder, as exporter-toolkit";
  EXPECT_EQ(c.tls->key.path, "/srv/tls/server.key");
  EXPECT_EQ(c.tls->min_version, 13);
  EXPECT_EQ(c.tls->max_version, 13);
  EXPECT_FALSE(c.tls->client_ca);
  ASSERT_EQ(c.users.size(), 1u);
  EXPECT_EQ(c.users.at("prometheus"), kPromDocsHash);
  ASSERT_EQ(c.headers.size(), 1u);
  EXPECT_EQ(c.headers[0].first, "X-Frame-Options");
}

// An empty file is a mistake (a failed template, a truncated copy), not a
// request for plain HTTP: node_exporter's silence there is not copied.
TEST(WebConfig, AnEmptyFileIsAUsageErrorNamingIt) {
  for (const char* text : {"", "\n  \n", "# TLS to come\n", "---\n", "  # only a comment\n\n"}) {
    SCOPED_TRACE(text);
    try {
      parse_web_config(text, "/etc/ioacct/web.yml", "/etc/ioacct");
      ADD_FAILURE() << "accepted";
    } catch (const UsageError& e) {
      EXPECT_EQ(std::string(e.what()),
                "--web.config.file: /etc/ioacct/web.yml: is empty (nothing but blanks or comments): it sets neither "
                "tls_server_config nor basic_auth_users; fill it in, or leave out --web.config.file to serve plain "
                "HTTP on purpose");
    }
  }
}

TEST(WebConfig, AnEmptyTlsSectionMeansPlainHttp) {
  EXPECT_FALSE(parse_web_config("tls_server_config: {}\n", "web.yml", ".").tls);
  EXPECT_TRUE(parse_web_config("basic_auth_users:\n", "web.yml", ".").users.empty());
}

TEST(WebConfig, ClientCertificatesNeedACaAndThePolicyThatChecksThem) {
  const WebConfig c = parse_web_config(
      "tls_server_config:\n  cert_file: a\n  key_file: b\n  client_auth_type: RequireAndVerifyClientCert\n"
      "  client_ca_file: ca.crt\n",
      "web.yml", "/d");
  ASSERT_TRUE(c.tls && c.tls->client_ca);
  EXPECT_EQ(c.tls->client_ca->path, "/d/ca.crt");
  EXPECT_NE(problem("tls_server_config:\n  cert_file: a\n  key_file: b\n  client_auth_type: RequireAndVerifyClientCert\n")
                .find("needs client_ca_file"),
            std::string::npos);
  EXPECT_NE(problem("tls_server_config:\n  cert_file: a\n  key_file: b\n  client_ca_file: ca.crt\n").find("NoClientCert"),
            std::string::npos);
  EXPECT_NE(problem("tls_server_config:\n  cert_file: a\n  key_file: b\n  client_auth_type: VerifyClientCertIfGiven\n")
                .find("not supported by ioacct"),
            std::string::npos);
}

TEST(WebConfig, EveryProblemNamesTheFileTheLineAndTheKey) {
  EXPECT_EQ(problem("tls_server_config:\n  cert_file: a\n  key_fil: b\n"),
            "--web.config.file: web.yml: line 3: unknown key 'key_fil' in tls_server_config (known: cert, cert_file, "
            "cipher_suites, client_allowed_sans, client_auth_type, client_ca, client_ca_file, curve_preferences, key, "
            "key_file, max_version, min_version, prefer_server_cipher_suites)");
  EXPECT_EQ(problem("tls_server_config:\n  cert_file: a\n"),
            "--web.config.file: web.yml: line 2: tls_server_config needs key_file (or key)");
  EXPECT_EQ(problem("basic_auth_users:\n  alice: hunter2\n").rfind("--web.config.file: web.yml: line 2: the password of "
                                                                   "'alice' is not a bcrypt hash",
                                                                   0),
            0u);
  EXPECT_EQ(problem("tls_server_config: [\n").rfind("--web.config.file: web.yml: line ", 0), 0u);
  EXPECT_NE(problem("tls_server_config: [\n").find("not valid YAML"), std::string::npos);
  EXPECT_EQ(problem("tls_config:\n  cert_file: a\n").rfind("--web.config.file: web.yml: line 1: unknown key 'tls_config'", 0),
            0u);
  EXPECT_NE(problem("tls_server_config:\n  cert_file: a\n  key_file: b\n  min_version: TLS14\n").find("TLS14"),
            std::string::npos);
  EXPECT_NE(problem("tls_server_config:\n  cert_file: a\n  key_file: b\n  min_version: TLS13\n  max_version: TLS12\n")
                .find("min_version is above max_version"),
            std::string::npos);
  EXPECT_NE(problem("tls_server_config:\n  cert_file: a\n  cert: x\n  key_file: b\n").find("not both"), std::string::npos);
  // The fuzzer's find: a block scalar with nothing under it is an empty cert.
  EXPECT_EQ(problem("tls_server_config:\n  cert: |\n  \n  key_file: k\n")
                .rfind("--web.config.file: web.yml: line 2: cert is empty", 0),
            0u);
  EXPECT_NE(problem("tls_server_config:\n  cert_file: a\n  key: \"\"\n").find("key is empty"), std::string::npos);
  EXPECT_NE(problem("tls_server_config:\n  cert_file: a\n  key_file: b\n  cipher_suites: [TLS_AES_128_GCM_SHA256]\n")
                .find("cipher_suites is not supported"),
            std::string::npos);
  EXPECT_NE(problem("http_server_config:\n  headers:\n    Server: x\n").find("unknown key 'Server'"), std::string::npos);
  EXPECT_NE(problem("- a\n- b\n").find("must be a mapping"), std::string::npos);
  EXPECT_NE(problem("basic_auth_users:\n  a:b: " + std::string(kPromDocsHash) + "\n").find("has a ':'"), std::string::npos);
}

// Found by a hostile pass: a $2b$31$ hash tied up a serving thread for hours
// per wrong password, a user given twice was taken silently (the last hash
// won), and a header value with a line break was accepted and never sent.
TEST(WebConfig, CostlyHashesTwiceGivenUsersAndBrokenHeadersAreRefused) {
  const std::string h14 = "$2y$14$baAGQKEhajgpp3X6yjlNQuEHg.q/1MetJK.O1IFnsYBXXDZxfi1kW";
  const std::string h15 = "$2y$15$baAGQKEhajgpp3X6yjlNQuEHg.q/1MetJK.O1IFnsYBXXDZxfi1kW";
  EXPECT_EQ(bcrypt_cost(h14), 14);
  EXPECT_EQ(bcrypt_cost("hunter2"), 0);
  EXPECT_EQ(parse_web_config("basic_auth_users:\n  a: " + h14 + "\n", "web.yml", ".").users.size(), 1u);
  EXPECT_EQ(problem("basic_auth_users:\n  a: " + h15 + "\n"),
            "--web.config.file: web.yml: line 2: the password of 'a' has bcrypt cost 15; ioacct takes at most 14 "
            "(cost 14 is about a second of CPU per check, and each step doubles it): make it again with "
            "htpasswd -nBC 12");
  EXPECT_EQ(problem("basic_auth_users:\n  a: " + std::string(kPromDocsHash) + "\n  a: " + h14 + "\n"),
            "--web.config.file: web.yml: line 3: user 'a' is given twice");
  EXPECT_EQ(problem("http_server_config:\n  headers:\n    X-Frame-Options: \"deny\\r\\nSet-Cookie: x\"\n"),
            "--web.config.file: web.yml: line 3: header X-Frame-Options has a line break in its value");
}

TEST(WebConfig, BcryptHashForms) {
  EXPECT_TRUE(is_bcrypt_hash(kPromDocsHash));
  EXPECT_TRUE(is_bcrypt_hash("$2y$10$baAGQKEhajgpp3X6yjlNQuEHg.q/1MetJK.O1IFnsYBXXDZxfi1kW"));
  EXPECT_FALSE(is_bcrypt_hash("$2x$10$baAGQKEhajgpp3X6yjlNQuEHg.q/1MetJK.O1IFnsYBXXDZxfi1kW")) << "not a form crypt checks";
  EXPECT_FALSE(is_bcrypt_hash("$2y$03$baAGQKEhajgpp3X6yjlNQuEHg.q/1MetJK.O1IFnsYBXXDZxfi1kW")) << "cost below 4";
  EXPECT_FALSE(is_bcrypt_hash("$2y$10$baAGQKEhajgpp3X6yjlNQuEHg.q/1MetJK.O1IFnsYBXXDZxfi1k")) << "short";
  EXPECT_FALSE(is_bcrypt_hash("$6$salt$abc")) << "sha512-crypt";
  EXPECT_FALSE(is_bcrypt_hash("hunter2"));
}

}  // namespace
}  // namespace ioacct
