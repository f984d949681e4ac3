#include "server/openai_images.h"

#include <string>
#include <utility>
#include <vector>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "core/config/field_error.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "server/status_conversion.h"

namespace ditserve::server {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

constexpr int kMaxBatch = 4;

absl::Status ParseError(const std::string& body) {
  absl::StatusOr<ImagesRequest> parsed = ParseImagesRequest(body, kMaxBatch);
  EXPECT_FALSE(parsed.ok()) << body;
  return parsed.status();
}

std::string ParamOf(const absl::Status& status) {
  const nlohmann::json body = nlohmann::json::parse(ErrorBody(status));
  return body["error"]["param"].is_null()
             ? "(null)"
             : body["error"]["param"].get<std::string>();
}

TEST(ParseImagesRequestTest, OpenAiFieldsBecomeTheGenerateRequest) {
  absl::StatusOr<ImagesRequest> parsed = ParseImagesRequest(
      R"({"model": "flux-dev", "prompt": "a red fox", "n": 3,
          "size": "768x512", "response_format": "b64_json",
          "user": "user-42"})",
      kMaxBatch);
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  const v1::GenerateRequest& request = parsed->request;
  EXPECT_EQ(request.model(), "flux-dev");
  EXPECT_THAT(request.prompt(),
              ElementsAre("a red fox", "a red fox", "a red fox"));
  EXPECT_EQ(request.width(), 768);
  EXPECT_EQ(request.height(), 512);
  EXPECT_EQ(parsed->user, "user-42");
  EXPECT_FALSE(request.has_num_inference_steps());
  EXPECT_EQ(request.output_format(), v1::OUTPUT_FORMAT_UNSPECIFIED);
}

TEST(ParseImagesRequestTest, DitserveFieldsKeepTheirGenerateRequestNames) {
  absl::StatusOr<ImagesRequest> parsed = ParseImagesRequest(
      R"({"prompt": "waves", "n": 2, "negative_prompt": "blur",
          "num_inference_steps": 7, "guidance_scale": 4.5,
          "seed": "18446744073709551615", "max_sequence_length": 64,
          "num_frames": 9, "fps": 12, "use_dynamic_cfg": true,
          "use_resolution_binning": false, "vae_tiling": true,
          "request_id": "r-1", "priority": -2,
          "output_format": "mp4", "size": "auto"})",
      kMaxBatch);
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  const v1::GenerateRequest& request = parsed->request;
  EXPECT_THAT(request.negative_prompt(), ElementsAre("blur", "blur"));
  EXPECT_EQ(request.num_inference_steps(), 7);
  EXPECT_FLOAT_EQ(request.guidance_scale(), 4.5F);
  EXPECT_EQ(request.seed(), 18446744073709551615ULL);
  EXPECT_EQ(request.max_sequence_length(), 64);
  EXPECT_EQ(request.num_frames(), 9);
  EXPECT_EQ(request.fps(), 12);
  EXPECT_TRUE(request.use_dynamic_cfg());
  EXPECT_TRUE(request.has_use_resolution_binning());
  EXPECT_FALSE(request.use_resolution_binning());
  EXPECT_TRUE(request.vae_tiling());
  EXPECT_EQ(request.request_id(), "r-1");
  EXPECT_EQ(request.priority(), -2);
  EXPECT_EQ(request.output_format(), v1::OUTPUT_FORMAT_MP4);
  EXPECT_FALSE(request.has_width()) << "\"auto\" leaves the model's size";
}

TEST(ParseImagesRequestTest, LossyFormatsAndTheirCompression) {
  for (const auto& [name, format] :
       {std::pair{"jpeg", v1::OUTPUT_FORMAT_JPEG},
        std::pair{"webp", v1::OUTPUT_FORMAT_WEBP}}) {
    absl::StatusOr<ImagesRequest> parsed = ParseImagesRequest(
        absl::StrCat(R"({"prompt": "x", "output_format": ")", name,
                     R"(", "output_compression": 75})"),
        kMaxBatch);
    ASSERT_TRUE(parsed.ok()) << parsed.status();
    EXPECT_EQ(parsed->request.output_format(), format);
    EXPECT_EQ(parsed->request.output_quality(), 75);
    parsed = ParseImagesRequest(
        absl::StrCat(R"({"prompt": "x", "output_format": ")", name, R"("})"),
        kMaxBatch);
    ASSERT_TRUE(parsed.ok()) << parsed.status();
    EXPECT_FALSE(parsed->request.has_output_quality())
        << "the server's default applies";
  }
}

TEST(ParseImagesRequestTest, OpenAiDefaultsSentExplicitlyChangeNothing) {
  absl::StatusOr<ImagesRequest> plain =
      ParseImagesRequest(R"({"prompt": "x", "n": 2})", kMaxBatch);
  ASSERT_TRUE(plain.ok()) << plain.status();
  for (
      const std::string fields :
      {R"("quality": "auto", "background": "auto")",
       R"("quality": "standard", "style": "vivid", "background": "opaque")",
       R"("moderation": "auto")", R"("moderation": "low")",
       // Typed clients send null for each field they were not given.
       R"("size": null, "seed": null, "response_format": null, "user": null)"}) {
    absl::StatusOr<ImagesRequest> parsed = ParseImagesRequest(
        absl::StrCat(R"({"prompt": "x", "n": 2, )", fields, "}"), kMaxBatch);
    ASSERT_TRUE(parsed.ok()) << fields << ": " << parsed.status();
    EXPECT_EQ(parsed->request.SerializeAsString(),
              plain->request.SerializeAsString())
        << fields;
  }
}

TEST(ParseImagesRequestTest, NumericSeedIsRead) {
  absl::StatusOr<ImagesRequest> parsed =
      ParseImagesRequest(R"({"prompt": "x", "seed": 42})", kMaxBatch);
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(parsed->request.seed(), 42U);
}

struct BadBody {
  std::string name;
  std::string body;
  std::string param;
  std::string message;
};

class BadImagesRequestTest : public ::testing::TestWithParam<BadBody> {};

TEST_P(BadImagesRequestTest, IsInvalidArgumentNamingTheField) {
  const absl::Status status = ParseError(GetParam().body);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(status.message()), HasSubstr(GetParam().message));
  EXPECT_EQ(ParamOf(status), GetParam().param);
}

INSTANTIATE_TEST_SUITE_P(
    Bodies, BadImagesRequestTest,
    ::testing::Values(
        BadBody{"not_json", "not json", "(null)", "not JSON"},
        BadBody{"array", "[1, 2]", "(null)", "must be a JSON object"},
        BadBody{"no_prompt", R"({"n": 1})", "prompt", "required"},
        BadBody{"prompt_list", R"({"prompt": ["a", "b"]})", "prompt",
                "must be a string, got [\"a\",\"b\"]"},
        BadBody{"prompt_nested_list", R"({"prompt": [["a"]]})", "(null)",
                "nests arrays or objects more than 2 levels deep"},
        BadBody{"n_above_max_batch", R"({"prompt": "a", "n": 5})", "n",
                "allowed 1 to 4"},
        BadBody{"n_zero", R"({"prompt": "a", "n": 0})", "n", "allowed 1 to 4"},
        BadBody{"n_fraction", R"({"prompt": "a", "n": 1.5})", "n",
                "32-bit integer"},
        BadBody{"size_one_number", R"({"prompt": "a", "size": "1024"})", "size",
                "WIDTHxHEIGHT"},
        BadBody{"size_zero_width", R"({"prompt": "a", "size": "0x64"})", "size",
                "WIDTHxHEIGHT"},
        BadBody{"url_format", R"({"prompt": "a", "response_format": "url"})",
                "response_format", "allowed: \"b64_json\""},
        BadBody{"gif_format", R"({"prompt": "a", "output_format": "gif"})",
                "output_format",
                "allowed: \"png\", \"jpeg\", \"webp\", \"mp4\""},
        BadBody{"compression_without_lossy_format",
                R"({"prompt": "a", "output_compression": 80})",
                "output_compression",
                "only with output_format \"jpeg\" or \"webp\""},
        BadBody{"compression_of_png",
                R"({"prompt": "a", "output_format": "png",
                    "output_compression": 80})",
                "output_compression", "only with output_format"},
        BadBody{"compression_zero",
                R"({"prompt": "a", "output_format": "jpeg",
                    "output_compression": 0})",
                "output_compression",
                "allowed 1 to 100 (the quality, 100 "
                "best), got 0"},
        BadBody{"compression_as_fraction",
                R"({"prompt": "a", "output_format": "webp",
                    "output_compression": 0.8})",
                "output_compression", "32-bit integer"},
        BadBody{"unknown_field", R"({"prompt": "a", "mask": "x"})", "mask",
                "unknown field; allowed: model, prompt, n"},
        BadBody{"long_unknown_field",
                absl::StrCat(R"({"prompt": "a", ")", std::string(100000, 'k'),
                             R"(": 1})"),
                absl::StrCat(std::string(64, 'k'), "..."),
                absl::StrCat(std::string(64, 'k'), "...: unknown field")},
        // A long value is quoted cut, as a long field name is.
        BadBody{"long_size",
                absl::StrCat(R"({"prompt": "a", "size": ")",
                             std::string(100000, 'k'), R"("})"),
                "size",
                absl::StrCat("\"", std::string(64, 'k'),
                             "...\" is not \"WIDTHxHEIGHT\"")},
        BadBody{
            "long_output_format",
            absl::StrCat(R"({"prompt": "a", "output_format": ")",
                         std::string(100000, 'k'), R"("})"),
            "output_format",
            absl::StrCat("\"", std::string(64, 'k'), "...\" is not supported")},
        BadBody{
            "long_style",
            absl::StrCat(R"({"prompt": "a", "style": ")",
                         std::string(100000, 'k'), R"("})"),
            "style",
            absl::StrCat("\"", std::string(64, 'k'), "...\" is not offered")},
        // The parser would keep the last; a proxy may have checked the first.
        BadBody{"repeated_field",
                R"({"prompt": "a", "n": 1, "priority": 0, "n": 4})", "n",
                "n: given more than once; send each field once"},
        BadBody{"strict_moderation", R"({"prompt": "a", "moderation": "high"})",
                "moderation",
                "allowed: \"auto\", \"low\" (ditserve moderates no content)"},
        BadBody{"null_prompt", R"({"prompt": null})", "prompt", "required"},
        BadBody{"hd_quality", R"({"prompt": "a", "quality": "hd"})", "quality",
                "\"hd\" is not offered; allowed: \"auto\", \"standard\" "
                "(the model's quality follows num_inference_steps"},
        BadBody{"natural_style", R"({"prompt": "a", "style": "natural"})",
                "style", "allowed: \"vivid\""},
        BadBody{"transparent_background",
                R"({"prompt": "a", "background": "transparent"})", "background",
                "allowed: \"auto\", \"opaque\" (the images have no alpha"},
        BadBody{"quality_as_number", R"({"prompt": "a", "quality": 1})",
                "quality", "must be a string"},
        BadBody{"negative_seed", R"({"prompt": "a", "seed": -1})", "seed",
                "0 to 2^64 - 1"},
        BadBody{"steps_as_string",
                R"({"prompt": "a", "num_inference_steps": "4"})",
                "num_inference_steps", "32-bit integer, got \"4\""},
        BadBody{"frames_over_int32",
                R"({"prompt": "a", "num_frames": 4294967296})", "num_frames",
                "32-bit integer"},
        BadBody{"guidance_past_float",
                R"({"prompt": "a", "guidance_scale": 1e39})", "guidance_scale",
                "must fit a 32-bit float, got 1e+39"},
        BadBody{"guidance_as_word",
                R"({"prompt": "a", "guidance_scale": "high"})",
                "guidance_scale", "must be a number"},
        BadBody{"priority_as_fraction", R"({"prompt": "a", "priority": 1.5})",
                "priority", "32-bit integer"},
        BadBody{"dynamic_cfg_as_number",
                R"({"prompt": "a", "use_dynamic_cfg": 1})", "use_dynamic_cfg",
                "true or false"}),
    [](const ::testing::TestParamInfo<BadBody>& info) {
      return info.param.name;
    });

// Within the 1 MiB a body may have: quoting a value this deep in an error
// recursed once per level and overflowed the stack.
TEST(ParseImagesRequestTest, DeeplyNestedBodyIsRefusedWithoutRecursing) {
  constexpr int kLevels = 400000;
  const std::string field_value =
      absl::StrCat(R"({"prompt": )", std::string(kLevels, '['),
                   std::string(kLevels, ']'), "}");
  const std::string body_itself =
      absl::StrCat(std::string(kLevels, '['), std::string(kLevels, ']'));
  for (const std::string& body : {field_value, body_itself}) {
    const absl::Status status = ParseError(body);
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(std::string(status.message()),
                HasSubstr("more than 2 levels deep"));
  }
}

TEST(ImagesResponseBodyTest, EachImageIsBase64WithTheConfigsSizeAndSeed) {
  v1::GenerateResponse response;
  for (const std::string data : {"\x89PNG one", "\x89PNG two"}) {
    v1::Image* image = response.add_images();
    image->set_data(data);
    image->set_mime_type("image/png");
  }
  response.mutable_config()->set_width(96);
  response.mutable_config()->set_height(64);
  response.mutable_config()->add_seeds(9007199254740993ULL);
  response.mutable_config()->add_seeds(9007199254740994ULL);
  response.mutable_config()->set_request_id("req-7");

  const nlohmann::json body = nlohmann::json::parse(
      ImagesResponseBody(response, absl::FromUnixSeconds(1700000000)));
  EXPECT_EQ(body["created"], 1700000000);
  ASSERT_EQ(body["data"].size(), 2U);
  std::string decoded;
  ASSERT_TRUE(absl::Base64Unescape(
      body["data"][1]["b64_json"].get<std::string>(), &decoded));
  EXPECT_EQ(decoded, "\x89PNG two");
  EXPECT_EQ(body["size"], "96x64");
  EXPECT_EQ(body["output_format"], "png");
  EXPECT_EQ(body["seed"], "9007199254740993") << "a string: exact in JS";
  EXPECT_EQ(body["request_id"], "req-7");
}

TEST(ParseImagesRequestTest, StreamIsReadAndPartialImagesNeedIt) {
  absl::StatusOr<ImagesRequest> streamed = ParseImagesRequest(
      R"({"prompt": "a", "stream": true, "partial_images": 2})", kMaxBatch);
  ASSERT_TRUE(streamed.ok()) << streamed.status();
  EXPECT_TRUE(streamed->stream);
  EXPECT_EQ(streamed->request.partial_images(), 2);
  EXPECT_FALSE(ParseImagesRequest(R"({"prompt": "a"})", kMaxBatch)->stream);
  EXPECT_TRUE(
      ParseImagesRequest(R"({"prompt": "a", "partial_images": 0})", kMaxBatch)
          .ok());

  const absl::Status partial =
      ParseError(R"({"prompt": "a", "partial_images": 2})");
  EXPECT_EQ(ParamOf(partial), "partial_images");
  EXPECT_THAT(partial.message(), HasSubstr("set \"stream\": true"));
  EXPECT_EQ(ParamOf(ParseError(R"({"prompt": "a", "stream": "yes"})")),
            "stream");
}

// "event: TYPE\ndata: JSON\n\n" as its type and parsed data.
std::pair<std::string, nlohmann::json> ParseEvent(const std::string& event) {
  constexpr char kEvent[] = "event: ";
  constexpr char kData[] = "\ndata: ";
  EXPECT_EQ(event.rfind(kEvent, 0), 0U) << event;
  const size_t data = event.find(kData);
  EXPECT_NE(data, std::string::npos) << event;
  EXPECT_EQ(event.substr(event.size() - 2), "\n\n") << event;
  const std::string json =
      event.substr(data + 7, event.size() - 2 - (data + 7));
  EXPECT_EQ(json.find('\n'), std::string::npos) << "one data line";
  return {event.substr(7, data - 7), nlohmann::json::parse(json)};
}

TEST(ImageEventsTest, ProgressIsOneEventWithTheStep) {
  v1::GenerateStreamResponse::Progress progress;
  progress.set_step(3);
  progress.set_total_steps(28);
  progress.set_elapsed_seconds(1.5);
  const auto [type, data] = ParseEvent(ProgressEvent(progress));
  EXPECT_EQ(type, "ditserve.progress");
  EXPECT_EQ(data, nlohmann::json({{"type", "ditserve.progress"},
                                  {"step", 3},
                                  {"total_steps", 28},
                                  {"elapsed_seconds", 1.5}}));
}

TEST(ImageEventsTest, APartialImageSaysWhichPreviewOfWhichOutputItIs) {
  v1::GenerateStreamResponse::PartialImage partial;
  partial.set_partial_image_index(1);
  partial.set_step(14);
  v1::Image* image = partial.mutable_image();
  image->set_data("\xff\xd8 preview");
  image->set_mime_type("image/jpeg");
  image->set_width(96);
  image->set_height(64);
  image->set_prompt_index(2);
  const auto [type, parsed] =
      ParseEvent(PartialImageEvent(partial, absl::FromUnixSeconds(1700000000)));
  EXPECT_EQ(type, "image_generation.partial_image");
  nlohmann::json data = parsed;
  std::string decoded;
  ASSERT_TRUE(
      absl::Base64Unescape(data["b64_json"].get<std::string>(), &decoded));
  EXPECT_EQ(decoded, "\xff\xd8 preview");
  data.erase("b64_json");
  EXPECT_EQ(data, nlohmann::json({{"type", "image_generation.partial_image"},
                                  {"created_at", 1700000000},
                                  {"size", "96x64"},
                                  {"output_format", "jpeg"},
                                  {"partial_image_index", 1},
                                  {"index", 2},
                                  {"step", 14}}));
}

TEST(ImageEventsTest, EachOutputCompletesWithItsOwnSeed) {
  v1::GenerateResponse response;
  for (int prompt = 0; prompt < 2; ++prompt) {
    v1::Image* image = response.add_images();
    image->set_data(absl::StrCat("\x89PNG ", prompt));
    image->set_mime_type("image/png");
    image->set_prompt_index(prompt);
  }
  v1::InputConfig& config = *response.mutable_config();
  config.set_width(96);
  config.set_height(64);
  config.add_seeds(41);
  config.add_seeds(42);
  config.set_request_id("req-9");
  const std::vector<std::string> events =
      CompletedEvents(response, absl::FromUnixSeconds(1700000000));
  ASSERT_EQ(events.size(), 2U);
  const auto [type, data] = ParseEvent(events[1]);
  EXPECT_EQ(type, "image_generation.completed");
  EXPECT_EQ(data["type"], "image_generation.completed");
  std::string decoded;
  ASSERT_TRUE(
      absl::Base64Unescape(data["b64_json"].get<std::string>(), &decoded));
  EXPECT_EQ(decoded, "\x89PNG 1");
  EXPECT_EQ(data["created_at"], 1700000000);
  EXPECT_EQ(data["size"], "96x64");
  EXPECT_EQ(data["output_format"], "png");
  EXPECT_EQ(data["index"], 1);
  EXPECT_EQ(data["seed"], "42");
  EXPECT_EQ(data["request_id"], "req-9");
}

TEST(ImageEventsTest, AnErrorEventCarriesTheErrorBody) {
  const absl::Status status = absl::DeadlineExceededError("deadline passed");
  const auto [type, data] = ParseEvent(ErrorEvent(status));
  EXPECT_EQ(type, "error");
  EXPECT_EQ(data, nlohmann::json::parse(ErrorBody(status)));
  EXPECT_EQ(data["error"]["code"], "deadline_exceeded");
}

TEST(ImagesResponseBodyTest, OutputFormatIsNamedAfterTheImagesMimeType) {
  for (const auto& [mime_type, name] :
       {std::pair{"image/jpeg", "jpeg"}, std::pair{"image/webp", "webp"},
        std::pair{"video/mp4", "mp4"}}) {
    v1::GenerateResponse response;
    response.add_images()->set_mime_type(mime_type);
    const nlohmann::json body = nlohmann::json::parse(
        ImagesResponseBody(response, absl::FromUnixSeconds(1700000000)));
    EXPECT_EQ(body["output_format"], name) << mime_type;
  }
}

TEST(ErrorBodyTest, FollowsOpenAisShapeWithTheGrpcCodeName) {
  const nlohmann::json body = nlohmann::json::parse(
      ErrorBody(absl::ResourceExhaustedError("queue full (16 waiting)")));
  EXPECT_EQ(body["error"]["message"], "queue full (16 waiting)");
  EXPECT_EQ(body["error"]["type"], "invalid_request_error");
  EXPECT_TRUE(body["error"]["param"].is_null());
  EXPECT_EQ(body["error"]["code"], "resource_exhausted");
  EXPECT_EQ(nlohmann::json::parse(ErrorBody(
                absl::UnavailableError("rank group lost")))["error"]["type"],
            "server_error");
}

TEST(ErrorBodyTest, AFreezeRefusalNamesTheParameterThatHoldsItsField) {
  const auto param = [](const absl::Status& status) {
    return nlohmann::json::parse(ErrorBody(status))["error"]["param"];
  };
  EXPECT_EQ(param(config::InvalidField("height", "height 70 is not ...")),
            "size");
  EXPECT_EQ(param(config::WithFields(absl::InvalidArgumentError("height × "),
                                     {"height", "width"})),
            "size");
  EXPECT_EQ(param(config::InvalidField("output_quality", "output_quality 0")),
            "output_compression");
  EXPECT_EQ(param(config::InvalidField("num_inference_steps", "...")),
            "num_inference_steps");
  EXPECT_EQ(
      param(config::WithFields(absl::NotFoundError("model \"x\""), {"model"})),
      "model");
  EXPECT_TRUE(param(absl::InvalidArgumentError("no field")).is_null());
}

// Errors quote client bytes: a URL path that is not UTF-8, a value cut
// short in the middle of a character. The body stays JSON.
TEST(ErrorBodyTest, BytesThatAreNotUtf8BecomeReplacementCharacters) {
  const nlohmann::json body = nlohmann::json::parse(
      ErrorBody(absl::NotFoundError("no route GET /\xff\xfe")));
  EXPECT_EQ(body["error"]["message"], "no route GET /\uFFFD\uFFFD");

  std::string accents;
  for (int i = 0; i < 40; ++i) accents += "\u00e9";
  const absl::Status cut =
      ParseError(nlohmann::json{{"prompt", "x"}, {"n", accents}}.dump());
  ASSERT_TRUE(nlohmann::json::accept(ErrorBody(cut))) << cut;
  EXPECT_EQ(ParamOf(cut), "n");
}

TEST(HttpStatusForTest, MapsTheCodesAnHttpClientActsOn) {
  EXPECT_EQ(HttpStatusFor(absl::StatusCode::kOk), 200);
  EXPECT_EQ(HttpStatusFor(absl::StatusCode::kInvalidArgument), 400);
  EXPECT_EQ(HttpStatusFor(absl::StatusCode::kUnauthenticated), 401);
  EXPECT_EQ(HttpStatusFor(absl::StatusCode::kNotFound), 404);
  EXPECT_EQ(HttpStatusFor(absl::StatusCode::kResourceExhausted), 429);
  EXPECT_EQ(HttpStatusFor(absl::StatusCode::kCancelled), 499);
  EXPECT_EQ(HttpStatusFor(absl::StatusCode::kUnavailable), 503);
  EXPECT_EQ(HttpStatusFor(absl::StatusCode::kDeadlineExceeded), 504);
  EXPECT_EQ(HttpStatusFor(absl::StatusCode::kInternal), 500);
}

}  // namespace
}  // namespace ditserve::server
