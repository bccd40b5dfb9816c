// format_rfc3339(): when something happened, as JavaScript's toISOString
// writes it (and Date.parse, jq's fromdate and Python read it back).
#include <gtest/gtest.h>

#include "common/errors.hpp"
#include "common/units.hpp"

namespace ioacct {
namespace {

TEST(Rfc3339, UtcToTheMillisecond) {
  EXPECT_EQ(format_rfc3339(0), "1970-01-01T00:00:00.000Z");
  EXPECT_EQ(format_rfc3339(1'764'603'600'123'456'789), "2025-12-01T15:40:00.123Z") << "truncated, not rounded";
  EXPECT_EQ(format_rfc3339(951'782'400'000'000'000), "2000-02-29T00:00:00.000Z") << "a leap day";
  EXPECT_EQ(format_rfc3339(-1'000'000), "1969-12-31T23:59:59.999Z") << "before the epoch";
}

}  // namespace
}  // namespace ioacct

namespace ioacct {
namespace {

// A window's edges print to the nanosecond, and --start-at reads them back.
TEST(Rfc3339, ToTheNanosecondAndBack) {
  EXPECT_EQ(format_rfc3339_ns(1'764'603'600'123'456'789), "2025-12-01T15:40:00.123456789Z");
  EXPECT_EQ(parse_instant("--start-at", "2025-12-01T15:40:00.123456789Z"), 1'764'603'600'123'456'789);
  EXPECT_EQ(parse_instant("--start-at", "2025-12-01T16:40:00.5+01:00"), 1'764'603'600'500'000'000);
  EXPECT_EQ(parse_instant("--start-at", "2025-12-01 10:10:00-05:30"), 1'764'603'600'000'000'000);
  EXPECT_EQ(parse_instant("--start-at", "2025-12-01t15:40:00z"), 1'764'603'600'000'000'000);
  EXPECT_EQ(parse_instant("--start-at", "@1764603600"), 1'764'603'600'000'000'000);
  EXPECT_EQ(parse_instant("--start-at", "@1764603600.25"), 1'764'603'600'250'000'000);
  EXPECT_EQ(parse_instant("--start-at", "2000-02-29T00:00:00Z"), 951'782'400'000'000'000) << "a leap day";
}

TEST(Rfc3339, AnythingElseIsAUsageErrorNamingTheFlag) {
  for (const char* bad : {"", "@", "@-5", "@12x", "@1.", "@1.1234567890", "tomorrow", "2025-12-01T15:40:00",
                          "2025-12-01T15:40Z", "2025-13-01T15:40:00Z", "2025-02-30T15:40:00Z", "2025-12-01T24:00:00Z",
                          "2025-12-01T15:40:00.Z", "2025-12-01T15:40:00+1:00", "2025-12-01T15:40:00+01:00junk",
                          "@99999999999999999999", "0000-01-01T00:30:00+01:00", "1969-12-31T23:59:59Z",
                          "2300-01-01T00:00:00Z"}) {
    try {
      parse_instant("--start-at", bad);
      ADD_FAILURE() << "accepted '" << bad << "'";
    } catch (const UsageError& e) {
      EXPECT_NE(std::string(e.what()).find("--start-at: "), std::string::npos) << e.what();
    }
  }
}

}  // namespace
}  // namespace ioacct
