// The Authorization header as RFC 7617 has it, and BasicAuth's answers
// without the bcrypt thread (the cache, a NUL) and with it.
#include "monitor/basic_auth.hpp"

#include <gtest/gtest.h>

#include <future>
#include <map>
#include <string>
#include <vector>

namespace ioacct {
namespace {

// Password "test", from Prometheus' own documentation (cost 12).
constexpr const char* kPromDocsHash = "$2b$12$hNf2lSsxfm0.i4a.1kVpSOVyBCfIB51VRjgBUyv6kdnyTlgWj81Ay";

TEST(BasicAuth, TheHeaderWithAnySchemeCaseAndPasswordsThatHoldAnything) {
  const auto c = parse_basic_authorization("Basic cHJvbWV0aGV1czp0ZXN0");  // prometheus:test
  ASSERT_TRUE(c);
  EXPECT_EQ(c->user, "prometheus");
  EXPECT_EQ(c->password, "test");
  EXPECT_TRUE(parse_basic_authorization("basic cHJvbWV0aGV1czp0ZXN0"));
  EXPECT_TRUE(parse_basic_authorization("BASIC   cHJvbWV0aGV1czp0ZXN0 "));
  const auto colon = parse_basic_authorization("Basic YTpiOmM=");  // a:b:c: the first ':' splits
  ASSERT_TRUE(colon);
  EXPECT_EQ(colon->user, "a");
  EXPECT_EQ(colon->password, "b:c");
  const auto nul = parse_basic_authorization("Basic YTp0ZXN0AHg=");  // "a:test\0x"
  ASSERT_TRUE(nul);
  EXPECT_EQ(nul->password, std::string("test\0x", 6));
  for (const char* bad : {"", "Basic", "Basic ", "Bearer cHJvbWV0aGV1czp0ZXN0", "Basicx cHJvbWV0aGV1czp0ZXN0",
                          "Basic !!!!", "Basic bm9jb2xvbg=="})  // the last: "nocolon"
    EXPECT_FALSE(parse_basic_authorization(bad)) << bad;
}

TEST(BasicAuth, APasswordThatPassedIsRememberedAndANulNeverPasses) {
  BasicAuth auth(std::map<std::string, std::string>{{"prometheus", kPromDocsHash}});
  const Credentials right{"prometheus", "test"};
  EXPECT_FALSE(auth.quick(right)) << "not seen yet: bcrypt decides";
  EXPECT_EQ(auth.quick({"prometheus", std::string("test\0anything", 13)}), false);
  std::promise<bool> verdict;
  ASSERT_TRUE(auth.enqueue(right, [&](bool ok) { verdict.set_value(ok); }));
  EXPECT_TRUE(verdict.get_future().get());
  EXPECT_EQ(auth.quick(right), true);
  EXPECT_FALSE(auth.quick({"prometheus", "wrong"}));
  EXPECT_FALSE(auth.check({"prometheus", "wrong"}));
  EXPECT_FALSE(auth.check({"nobody", "test"}));
  EXPECT_EQ(auth.quick(right), true) << "a wrong password does not forget the right one";
}

TEST(BasicAuth, ChecksStillQueuedWhenItStopsAreAnsweredFalse) {
  std::vector<std::promise<bool>> answers(BasicAuth::kMaxQueued + 1);
  std::vector<std::future<bool>> got;
  for (auto& a : answers) got.push_back(a.get_future());
  {
    BasicAuth auth(std::map<std::string, std::string>{{"prometheus", kPromDocsHash}});
    size_t queued = 0;
    for (auto& a : answers)
      if (auth.enqueue({"prometheus", "wrong"}, [&a](bool ok) { a.set_value(ok); })) ++queued;
    EXPECT_GE(queued, BasicAuth::kMaxQueued) << "the bcrypt thread may have taken one already";
    EXPECT_LE(queued, BasicAuth::kMaxQueued + 1);
    if (queued == BasicAuth::kMaxQueued) answers.back().set_value(false);  // refused: never called
  }
  for (auto& g : got) EXPECT_FALSE(g.get());
}

}  // namespace
}  // namespace ioacct
