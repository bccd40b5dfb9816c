// format_rfc3339(): when something happened, as JavaScript's toISOString
// writes it (and Date.parse, jq's fromdate and Python read it back).
#include <gtest/gtest.h>

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
