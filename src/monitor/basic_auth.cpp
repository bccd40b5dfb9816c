#include "monitor/basic_auth.hpp"

#include <crypt.h>
#include <fmt/format.h>
#include <gnutls/crypto.h>
#include <gnutls/gnutls.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cstring>
#include <memory>

#include "monitor/web_config.hpp"

namespace ioacct {
namespace {

std::string sha256(std::string_view s) {
  std::array<unsigned char, 32> d{};
  gnutls_hash_fast(GNUTLS_DIG_SHA256, s.data(), s.size(), d.data());
  return {reinterpret_cast<const char*>(d.data()), d.size()};
}

bool same(std::string_view a, std::string_view b) {  // constant time for equal lengths
  if (a.size() != b.size()) return false;
  unsigned char diff = 0;
  for (size_t i = 0; i < a.size(); ++i) diff |= static_cast<unsigned char>(a[i] ^ b[i]);
  return diff == 0;
}

bool bcrypt_matches(const std::string& password, const std::string& hash) {
  auto data = std::make_unique<crypt_data>();
  const char* out = crypt_rn(password.c_str(), hash.c_str(), data.get(), sizeof *data);
  return out && same(out, hash);
}

}  // namespace

std::optional<Credentials> parse_basic_authorization(std::string_view h) {
  constexpr std::string_view kScheme = "basic";
  if (h.size() <= kScheme.size() || h[kScheme.size()] != ' ') return std::nullopt;
  for (size_t i = 0; i < kScheme.size(); ++i)
    if (std::tolower(static_cast<unsigned char>(h[i])) != kScheme[i]) return std::nullopt;
  std::string b64(h.substr(kScheme.size() + 1));
  while (!b64.empty() && b64.front() == ' ') b64.erase(b64.begin());
  while (!b64.empty() && b64.back() == ' ') b64.pop_back();
  if (b64.empty()) return std::nullopt;
  const gnutls_datum_t in{reinterpret_cast<unsigned char*>(b64.data()), static_cast<unsigned>(b64.size())};
  gnutls_datum_t out{};
  if (gnutls_base64_decode2(&in, &out) != 0) return std::nullopt;
  const std::string plain(reinterpret_cast<const char*>(out.data), out.size);
  gnutls_free(out.data);
  const size_t colon = plain.find(':');
  if (colon == std::string::npos) return std::nullopt;
  return Credentials{plain.substr(0, colon), plain.substr(colon + 1)};
}

BasicAuth::BasicAuth(std::map<std::string, std::string> users) : users_(std::move(users)) {
  int cost = 4;
  for (const auto& [u, h] : users_) cost = std::max(cost, bcrypt_cost(h));
  // A well-formed hash that no password matches: crypt(3) does the full work
  // of its cost before the comparison fails.
  decoy_ = fmt::format("$2b${:02}$baAGQKEhajgpp3X6yjlNQuEHg.q/1MetJK.O1IFnsYBXXDZxfi1kW", cost);
  worker_ = std::thread([this] { run(); });
}

BasicAuth::~BasicAuth() {
  {
    const std::lock_guard lock(mu_);
    stopping_ = true;
  }
  wake_.notify_all();
  worker_.join();
}

std::optional<bool> BasicAuth::quick(const Credentials& c) {
  if (c.password.find('\0') != std::string::npos || c.user.find('\0') != std::string::npos) return false;
  const std::lock_guard lock(mu_);
  const auto it = passed_.find(c.user);
  if (it != passed_.end() && same(it->second, sha256(c.password))) return true;
  return std::nullopt;
}

bool BasicAuth::enqueue(Credentials c, std::function<void(bool)> done) {
  {
    const std::lock_guard lock(mu_);
    if (stopping_ || queue_.size() >= kMaxQueued) return false;
    queue_.emplace_back(std::move(c), std::move(done));
  }
  wake_.notify_one();
  return true;
}

bool BasicAuth::check(const Credentials& c) {
  if (const auto q = quick(c)) return *q;
  const auto it = users_.find(c.user);
  if (it == users_.end()) {
    bcrypt_matches(c.password, decoy_);
    return false;
  }
  if (!bcrypt_matches(c.password, it->second)) return false;
  const std::lock_guard lock(mu_);
  passed_[c.user] = sha256(c.password);
  return true;
}

void BasicAuth::run() {
  for (;;) {
    std::pair<Credentials, std::function<void(bool)>> job;
    bool stopping = false;
    {
      std::unique_lock lock(mu_);
      wake_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
      if (queue_.empty()) return;  // stopping, nothing left
      job = std::move(queue_.front());
      queue_.pop_front();
      stopping = stopping_;
    }
    // While stopping, what is still queued is answered at once: the server
    // waits for every suspended request before it stops.
    job.second(!stopping && check(job.first));
  }
}

}  // namespace ioacct
