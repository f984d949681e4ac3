#include "core/checkpoints/sentencepiece_trainer.h"

#include <stdlib.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "core/base/status_macros.h"
#include "core/checkpoints/child_process.h"

namespace ditserve::checkpoints {
namespace {

constexpr char kTrainerProgram[] = "spm_train";
// Training a few hundred pieces takes well under a second; the margin is for
// a machine busy with builds.
constexpr absl::Duration kTrainTimeout = absl::Minutes(2);
// Only its being fixed matters: the trainer's default draws a fresh seed.
constexpr int kTrainerRandomSeed = 1234;
// The trainer records its input and output paths inside the model, so they
// are the same relative names on every run.
constexpr char kCorpusFile[] = "corpus.txt";
constexpr char kModelPrefix[] = "spiece";

// Printable ASCII but the space (SentencePiece's piece boundary), so no
// prompt typed on a keyboard meets <unk>.
std::string PrintableAscii() {
  std::string chars;
  for (char c = '!'; c <= '~'; ++c) chars.push_back(c);
  return chars;
}

// A private folder under the system's temporary directory, removed with
// everything in it when this goes out of scope.
class ScratchDir {
 public:
  static absl::StatusOr<ScratchDir> Create() {
    std::string pattern =
        (std::filesystem::temp_directory_path() / "ditserve-spm-XXXXXX")
            .string();
    if (mkdtemp(pattern.data()) == nullptr) {
      return absl::InternalError(
          absl::StrCat("cannot create a temporary folder like ", pattern, ": ",
                       std::strerror(errno)));
    }
    return ScratchDir(pattern);
  }
  ScratchDir(ScratchDir&& other) noexcept : path_(std::move(other.path_)) {
    other.path_.clear();
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
  ScratchDir& operator=(ScratchDir&&) = delete;
  ~ScratchDir() {
    if (path_.empty()) return;
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  const std::filesystem::path& path() const { return path_; }

 private:
  explicit ScratchDir(std::filesystem::path path) : path_(std::move(path)) {}
  std::filesystem::path path_;
};

}  // namespace

absl::Status TrainT5SentencePiece(const std::string& corpus, int vocab_size,
                                  const std::string& model_path) {
  ASSIGN_OR_RETURN(ScratchDir scratch, ScratchDir::Create());
  const std::filesystem::path corpus_path = scratch.path() / kCorpusFile;
  {
    std::ofstream out(corpus_path, std::ios::binary);
    out << corpus;
    out.close();
    if (!out) {
      return absl::InternalError(
          absl::StrCat("cannot write the corpus ", corpus_path.string()));
    }
  }
  const std::vector<std::string> argv = {
      kTrainerProgram,
      absl::StrCat("--input=", kCorpusFile),
      absl::StrCat("--model_prefix=", kModelPrefix),
      "--model_type=unigram",
      absl::StrCat("--vocab_size=", vocab_size),
      "--pad_id=0",
      "--eos_id=1",
      "--unk_id=2",
      "--bos_id=-1",
      "--normalization_rule_name=nmt_nfkc",
      "--character_coverage=1.0",
      absl::StrCat("--required_chars=", PrintableAscii()),
      "--num_threads=1",
      absl::StrCat("--random_seed=", kTrainerRandomSeed),
  };
  const std::filesystem::path log_path = scratch.path() / "train.log";
  if (absl::Status status = RunChildProcess(argv, scratch.path().string(),
                                            log_path.string(), kTrainTimeout);
      !status.ok()) {
    absl::StatusCode code = status.code();
    if (code == absl::StatusCode::kNotFound) {
      return absl::NotFoundError(
          absl::StrCat(status.message(),
                       " (the SentencePiece trainer of Debian's sentencepiece "
                       "package, see deploy/install-deps.sh)"));
    }
    if (code == absl::StatusCode::kInternal &&
        absl::StrContains(status.message(), "Vocabulary size too high")) {
      code = absl::StatusCode::kInvalidArgument;
    }
    return absl::Status(
        code, absl::StrCat("training a ", vocab_size,
                           "-piece SentencePiece model: ", status.message()));
  }
  std::error_code error;
  std::filesystem::copy_file(
      scratch.path() / absl::StrCat(kModelPrefix, ".model"), model_path,
      std::filesystem::copy_options::overwrite_existing, error);
  if (error) {
    return absl::InternalError(
        absl::StrCat("cannot copy the trained SentencePiece model to ",
                     model_path, ": ", error.message()));
  }
  return absl::OkStatus();
}

}  // namespace ditserve::checkpoints
