#pragma once
// HTTP basic authentication for `ioacct export` (RFC 7617), against the
// bcrypt hashes of a web config's basic_auth_users.
//
// bcrypt costs tens to hundreds of milliseconds by design. The checks that
// need it run on a thread of their own, never on the threads that serve
// scrapes: a client sending wrong passwords as fast as it can waits in that
// thread's queue, and a scraper whose password already passed is answered
// from a cache (the SHA-256 of what passed, compared in constant time) on
// the serving thread. An unknown user costs the same bcrypt work as the most
// costly configured one, so timing does not tell which users exist.
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>

namespace ioacct {

struct Credentials {
  std::string user, password;  // as sent, with their lengths: a NUL inside stays
};

// The credentials of an Authorization header's value ("Basic dXNlcjpwYXNz").
// The scheme's name is case-insensitive (RFC 9110, 11.1); nullopt for any
// other scheme, bad base64, or no ':' between user and password. Pure.
std::optional<Credentials> parse_basic_authorization(std::string_view header);

class BasicAuth {
 public:
  // How many checks may wait for the bcrypt thread; beyond that a request
  // is refused at once (503) rather than queued without bound.
  static constexpr size_t kMaxQueued = 64;

  explicit BasicAuth(std::map<std::string, std::string> users);  // user -> bcrypt hash
  ~BasicAuth();  // answers every check still queued with false, then joins
  BasicAuth(const BasicAuth&) = delete;
  BasicAuth& operator=(const BasicAuth&) = delete;

  // The answer when no bcrypt is needed: true for a password seen to pass
  // before, false for one no bcrypt could accept (a NUL inside it: crypt(3)
  // would read only what comes before it).
  std::optional<bool> quick(const Credentials& c);

  // Queues a bcrypt check; `done(ok)` is called once, from the bcrypt
  // thread. False (and `done` is not called) when kMaxQueued are waiting.
  bool enqueue(Credentials c, std::function<void(bool)> done);

  // The check itself, on the calling thread (what the bcrypt thread runs).
  bool check(const Credentials& c);

 private:
  void run();

  std::map<std::string, std::string> users_;
  std::string decoy_;  // a hash of the highest configured cost, for unknown users
  std::mutex mu_;
  std::map<std::string, std::string> passed_;  // user -> SHA-256 of the password that last passed
  std::condition_variable wake_;
  std::deque<std::pair<Credentials, std::function<void(bool)>>> queue_;
  bool stopping_ = false;
  std::thread worker_;
};

}  // namespace ioacct
