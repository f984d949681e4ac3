#include "tools/make_checkpoint/text_components.h"

#include <torch/torch.h>

#include <exception>
#include <filesystem>

#include "absl/strings/str_cat.h"
#include "core/io/json_file.h"
#include "core/io/safetensors.h"
#include "core/models/text/clip_text_model.h"
#include "core/models/text/t5_encoder_model.h"
#include "nlohmann/json.hpp"
#include "tools/make_checkpoint/clip_tokenizer_writer.h"
#include "tools/make_checkpoint/english_corpus.h"
#include "tools/make_checkpoint/json_output.h"
#include "tools/make_checkpoint/t5_tokenizer_writer.h"

namespace ditserve::tools {
namespace {

// The transformers version whose folder layout is written.
constexpr char kTransformersVersion[] = "4.43.4";
constexpr char kWeightsFile[] = "model.safetensors";
// Scale of the noise added to every initialised parameter, as for the
// diffusers components.
constexpr double kParameterNoise = 0.02;
// Every CLIP text encoder has 77 positions.
constexpr int kClipPositions = 77;
// Enough pieces and merges that common prompt words are one or two tokens;
// the built-in corpus allows a little over 400 SentencePiece pieces.
constexpr int kT5Pieces = 400;
constexpr int kClipMerges = 300;

// Depth and width of both encoders; the model widths come from the
// transformer.
struct EncoderShape {
  int layers;
  int heads;
  // Feed-forward width as a multiple of the model width.
  int ff_multiple;
};

EncoderShape ShapeOf(CheckpointPreset preset) {
  return preset == CheckpointPreset::kTiny ? EncoderShape{2, 4, 2}
                                           : EncoderShape{4, 4, 4};
}

absl::Status CheckWidth(const char* what, int width, int heads) {
  if (width <= 0 || width % heads != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, " ", width, " is not a positive multiple of the ",
                     heads, " attention heads of the text encoders"));
  }
  return absl::OkStatus();
}

nlohmann::json ClipConfigJson(const EncoderShape& shape, int hidden_size,
                              const ClipVocabulary& vocabulary) {
  return {
      {"architectures", {"CLIPTextModel"}},
      {"attention_dropout", 0.0},
      {"bos_token_id", vocabulary.bos_token_id},
      // The real id: pooling reads the first EOS of each row.
      {"eos_token_id", vocabulary.eos_token_id},
      {"hidden_act", "quick_gelu"},
      {"hidden_size", hidden_size},
      {"initializer_factor", 1.0},
      {"initializer_range", 0.02},
      {"intermediate_size", hidden_size * shape.ff_multiple},
      {"layer_norm_eps", 1e-5},
      {"max_position_embeddings", kClipPositions},
      {"model_type", "clip_text_model"},
      {"num_attention_heads", shape.heads},
      {"num_hidden_layers", shape.layers},
      {"pad_token_id", vocabulary.eos_token_id},
      {"projection_dim", hidden_size},
      {"torch_dtype", "float32"},
      {"transformers_version", kTransformersVersion},
      {"vocab_size", vocabulary.vocab_size},
  };
}

nlohmann::json T5ConfigJson(const EncoderShape& shape, int d_model,
                            const T5Vocabulary& vocabulary) {
  return {
      {"architectures", {"T5EncoderModel"}},
      {"classifier_dropout", 0.0},
      {"d_ff", d_model * shape.ff_multiple},
      {"d_kv", d_model / shape.heads},
      {"d_model", d_model},
      {"decoder_start_token_id", vocabulary.pad_token_id},
      {"dense_act_fn", "gelu_new"},
      {"dropout_rate", 0.0},
      {"eos_token_id", vocabulary.eos_token_id},
      {"feed_forward_proj", "gated-gelu"},
      {"initializer_factor", 1.0},
      {"is_encoder_decoder", false},
      {"is_gated_act", true},
      {"layer_norm_epsilon", 1e-6},
      {"model_type", "t5"},
      {"num_decoder_layers", shape.layers},
      {"num_heads", shape.heads},
      {"num_layers", shape.layers},
      {"pad_token_id", vocabulary.pad_token_id},
      {"relative_attention_max_distance", 128},
      {"relative_attention_num_buckets", 32},
      {"tie_word_embeddings", false},
      {"torch_dtype", "float32"},
      {"transformers_version", kTransformersVersion},
      {"use_cache", false},
      {"vocab_size", vocabulary.vocab_size},
  };
}

// The module's parameters after the seeded noise, by transformers name.
io::TensorMap PerturbedWeights(torch::nn::Module& module) {
  torch::NoGradGuard no_grad;
  io::TensorMap weights;
  for (const auto& parameter : module.named_parameters()) {
    parameter.value().add_(torch::randn_like(parameter.value()) *
                           kParameterNoise);
    weights[parameter.key()] = parameter.value();
  }
  return weights;
}

absl::Status WriteEncoder(const std::filesystem::path& dir,
                          const nlohmann::json& config,
                          torch::nn::Module& module) {
  if (absl::Status status = CreateFolder(dir); !status.ok()) return status;
  if (absl::Status status = WriteJsonFile(dir / "config.json", config);
      !status.ok()) {
    return status;
  }
  return io::WriteSafetensors((dir / kWeightsFile).string(),
                              PerturbedWeights(module), {{"format", "pt"}});
}

// Builds each encoder from the config it writes, so the folder and the
// weights agree by construction.
absl::Status WriteEncoders(const EncoderShape& shape, uint64_t seed,
                           int t5_d_model, int clip_hidden_size,
                           const ClipVocabulary& clip_vocabulary,
                           const T5Vocabulary& t5_vocabulary,
                           const std::filesystem::path& root) {
  const nlohmann::json clip_json =
      ClipConfigJson(shape, clip_hidden_size, clip_vocabulary);
  absl::StatusOr<models::CLIPTextConfig> clip_config =
      models::CLIPTextConfig::FromJson(clip_json, "text_encoder/config.json");
  if (!clip_config.ok()) return clip_config.status();
  const nlohmann::json t5_json = T5ConfigJson(shape, t5_d_model, t5_vocabulary);
  absl::StatusOr<models::T5EncoderConfig> t5_config =
      models::T5EncoderConfig::FromJson(t5_json, "text_encoder_2/config.json");
  if (!t5_config.ok()) return t5_config.status();
  try {
    torch::manual_seed(seed);
    models::CLIPTextModel clip(*clip_config);
    if (absl::Status status =
            WriteEncoder(root / "text_encoder", clip_json, clip);
        !status.ok()) {
      return status;
    }
    models::T5EncoderModel t5(*t5_config);
    return WriteEncoder(root / "text_encoder_2", t5_json, t5);
  } catch (const std::exception& e) {
    return absl::InternalError(absl::StrCat(
        "initialising the text encoders for ", root.string(), ": ", e.what()));
  }
}

// Adds the four text components to an existing model_index.json.
absl::Status ListInModelIndex(const std::filesystem::path& root) {
  const std::filesystem::path path = root / "model_index.json";
  absl::StatusOr<nlohmann::json> index = io::ReadJsonFile(path.string());
  if (!index.ok()) {
    return absl::FailedPreconditionError(
        absl::StrCat("the text components are listed in the pipeline's "
                     "model_index.json, which must be written first: ",
                     index.status().message()));
  }
  (*index)["text_encoder"] = {"transformers", "CLIPTextModel"};
  (*index)["text_encoder_2"] = {"transformers", "T5EncoderModel"};
  (*index)["tokenizer"] = {"transformers", "CLIPTokenizer"};
  (*index)["tokenizer_2"] = {"transformers", "T5Tokenizer"};
  return WriteJsonFile(path, *index);
}

}  // namespace

absl::Status WriteFluxTextComponents(CheckpointPreset preset, uint64_t seed,
                                     int t5_d_model, int clip_hidden_size,
                                     const std::string& out_dir) {
  const EncoderShape shape = ShapeOf(preset);
  if (absl::Status status = CheckWidth("T5 d_model", t5_d_model, shape.heads);
      !status.ok()) {
    return status;
  }
  if (absl::Status status =
          CheckWidth("CLIP hidden size", clip_hidden_size, shape.heads);
      !status.ok()) {
    return status;
  }
  const std::filesystem::path root(out_dir);
  const std::string corpus = BuiltInEnglishCorpus();
  absl::StatusOr<ClipVocabulary> clip_vocabulary =
      WriteClipTokenizer(corpus, kClipMerges, (root / "tokenizer").string());
  if (!clip_vocabulary.ok()) return clip_vocabulary.status();
  absl::StatusOr<T5Vocabulary> t5_vocabulary =
      WriteT5Tokenizer(corpus, kT5Pieces, (root / "tokenizer_2").string());
  if (!t5_vocabulary.ok()) return t5_vocabulary.status();
  if (absl::Status status =
          WriteEncoders(shape, seed, t5_d_model, clip_hidden_size,
                        *clip_vocabulary, *t5_vocabulary, root);
      !status.ok()) {
    return status;
  }
  return ListInModelIndex(root);
}

}  // namespace ditserve::tools
