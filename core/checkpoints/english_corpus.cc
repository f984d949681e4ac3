#include "core/checkpoints/english_corpus.h"

#include <array>
#include <cstdint>

#include "absl/strings/str_cat.h"

namespace ditserve::checkpoints {
namespace {

constexpr int kSentences = 3000;

constexpr std::array kStyles = {
    "photograph", "watercolor", "sketch",   "drawing",   "render",
    "painting",   "poster",     "portrait", "woodcut",   "mosaic",
    "sculpture",  "collage",    "etching",  "miniature", "blueprint"};
constexpr std::array kAdjectives = {
    "red",     "blue",    "green",   "golden",   "silver",   "purple",
    "orange",  "small",   "large",   "ancient",  "quiet",    "bright",
    "dark",    "wooden",  "glass",   "tiny",     "giant",    "snowy",
    "sunny",   "misty",   "old",     "young",    "happy",    "calm",
    "stormy",  "frozen",  "shiny",   "soft",     "colorful", "gentle",
    "distant", "hidden",  "narrow",  "wide",     "tall",     "crowded",
    "empty",   "rusty",   "modern",  "velvet",   "electric", "peaceful",
    "curious", "magical", "elegant", "luminous", "weathered"};
constexpr std::array kNouns = {
    "cat",        "dog",      "tree",    "house",     "river",     "mountain",
    "city",       "forest",   "castle",  "robot",     "flower",    "bird",
    "ship",       "garden",   "street",  "lake",      "cloud",     "horse",
    "bridge",     "tower",    "window",  "village",   "desert",    "ocean",
    "island",     "valley",   "meadow",  "lantern",   "train",     "bicycle",
    "market",     "library",  "kitchen", "dragon",    "knight",    "wizard",
    "fox",        "rabbit",   "owl",     "whale",     "butterfly", "candle",
    "clock",      "mirror",   "teapot",  "umbrella",  "violin",    "astronaut",
    "lighthouse", "squirrel", "penguin", "jellyfish", "cathedral", "harbor"};
constexpr std::array kVerbs = {
    "sits",  "stands",  "runs",    "flies",  "sleeps",   "glows",
    "walks", "floats",  "waits",   "shines", "rests",    "dances",
    "sings", "jumps",   "hides",   "grows",  "reads",    "climbs",
    "swims", "wanders", "watches", "dreams", "sparkles", "drifts"};
constexpr std::array kPrepositions = {"on",      "under", "near",   "beside",
                                      "behind",  "above", "in",     "across",
                                      "through", "along", "inside", "beyond"};
constexpr std::array kSettings = {
    "at sunset",      "at dawn",       "at night",         "in the rain",
    "in winter",      "in spring",     "under moonlight",  "in autumn",
    "at noon",        "in the fog",    "during a storm",   "in summer",
    "by candlelight", "in deep space", "on a cold morning"};
constexpr std::array kEndings = {".", "!", "?", ";", ":", "..."};

// A fixed 64-bit linear congruential sequence (Knuth's MMIX constants):
// unlike the standard distributions, its output is the same everywhere.
class WordPicker {
 public:
  template <size_t N>
  const char* Pick(const std::array<const char*, N>& words) {
    return words[Next() % N];
  }
  // In [0, below).
  int Number(int below) { return static_cast<int>(Next() % below); }

 private:
  // The high bits: the low ones of an LCG have short periods.
  uint64_t Next() {
    state_ = state_ * 6364136223846793005ULL + 1442695040888963407ULL;
    return state_ >> 33;
  }

  uint64_t state_ = 0;
};

std::string Capitalised(const char* word) {
  std::string out = word;
  if (!out.empty() && out[0] >= 'a' && out[0] <= 'z') out[0] += 'A' - 'a';
  return out;
}

}  // namespace

std::string BuiltInEnglishCorpus() {
  WordPicker picker;
  std::string corpus;
  for (int i = 0; i < kSentences; ++i) {
    // Varying the shape of the sentence gives capitals, digits, quotes and
    // brackets a place in the vocabularies too.
    switch (i % 4) {
      case 0:
        absl::StrAppend(&corpus, "A ", picker.Pick(kStyles), " of a ",
                        picker.Pick(kAdjectives), " ", picker.Pick(kNouns),
                        " that ", picker.Pick(kVerbs), " ",
                        picker.Pick(kPrepositions), " the ",
                        picker.Pick(kAdjectives), " ", picker.Pick(kNouns), " ",
                        picker.Pick(kSettings), ", ", picker.Number(1000),
                        " times", picker.Pick(kEndings), "\n");
        break;
      case 1:
        absl::StrAppend(&corpus, Capitalised(picker.Pick(kAdjectives)), " ",
                        picker.Pick(kNouns), "s ", picker.Pick(kPrepositions),
                        " a ", picker.Pick(kNouns), " (", picker.Pick(kStyles),
                        ", ", picker.Number(100), "% detail)",
                        picker.Pick(kEndings), "\n");
        break;
      case 2:
        absl::StrAppend(&corpus, "\"", Capitalised(picker.Pick(kNouns)), "'s ",
                        picker.Pick(kNouns), "\" - a ",
                        picker.Pick(kAdjectives), " ", picker.Pick(kStyles),
                        " ", picker.Pick(kSettings), ", ",
                        1900 + picker.Number(130), picker.Pick(kEndings), "\n");
        break;
      default:
        absl::StrAppend(
            &corpus, "The ", picker.Pick(kNouns), " ", picker.Pick(kVerbs), " ",
            picker.Pick(kSettings), " & the ", picker.Pick(kAdjectives), " ",
            picker.Pick(kNouns), " ", picker.Pick(kVerbs), " ",
            picker.Pick(kPrepositions), " it [", picker.Number(10), "/",
            picker.Number(10), "]", picker.Pick(kEndings), "\n");
        break;
    }
  }
  return corpus;
}

}  // namespace ditserve::checkpoints
