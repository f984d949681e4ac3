#include "core/config/config_digest.h"

#include "ditserve/v1/input_config.pb.h"
#include "gtest/gtest.h"

namespace ditserve::config {
namespace {

TEST(ConfigDigestTest, MatchesPublishedFnv1aVectors) {
  EXPECT_EQ(StableDigest(""), 0xcbf29ce484222325ULL);
  EXPECT_EQ(StableDigest("a"), 0xaf63dc4c8601ec8cULL);
  EXPECT_EQ(StableDigest("foobar"), 0x85944171f73967e8ULL);
}

TEST(ConfigDigestTest, EqualMessagesGiveEqualBytesAndDigest) {
  v1::InputConfig a;
  a.set_request_id("r1");
  a.add_prompt("a cat");
  a.add_seeds(7);
  v1::InputConfig b = a;
  EXPECT_EQ(SerializeDeterministic(a), SerializeDeterministic(b));
  EXPECT_EQ(MessageDigest(a), MessageDigest(b));
  b.set_seeds(0, 8);
  EXPECT_NE(MessageDigest(a), MessageDigest(b));
}

TEST(ConfigDigestTest, HexHasSixteenDigits) {
  EXPECT_EQ(DigestHex(0xabcULL), "0x0000000000000abc");
}

}  // namespace
}  // namespace ditserve::config
