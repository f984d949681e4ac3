#include "core/checkpoints/text_components.h"

#include <torch/torch.h>

#include <exception>
#include <filesystem>
#include <memory>

#include "absl/strings/str_cat.h"
#include "core/base/guarded.h"
#include "core/base/json.h"
#include "core/base/status_macros.h"
#include "core/checkpoints/clip_tokenizer_writer.h"
#include "core/checkpoints/english_corpus.h"
#include "core/checkpoints/json_output.h"
#include "core/checkpoints/t5_tokenizer_writer.h"
#include "core/models/layers/parameter_init.h"
#include "core/models/text/clip_text_model.h"
#include "core/models/text/t5_encoder_model.h"
#include "nlohmann/json.hpp"

namespace ditserve::checkpoints {
namespace {

// The transformers version whose folder layout is written.
constexpr char kTransformersVersion[] = "4.43.4";
constexpr char kWeightsFile[] = "model.safetensors";
// Every CLIP text encoder has 77 positions.
constexpr int kClipPositions = 77;
// Enough pieces and merges that common prompt words are one or two tokens;
// the built-in corpus allows a little over 400 SentencePiece pieces.
constexpr int kT5Pieces = 400;
constexpr int kClipMerges = 300;

// Depth and width of every encoder; the model widths come from the
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
                              const ClipVocabulary& vocabulary,
                              const char* architecture) {
  return {
      {"architectures", {architecture}},
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

// What each slot's tokenizer gave its encoder's config.
struct SlotVocabulary {
  ClipVocabulary clip;
  T5Vocabulary t5;
};

absl::StatusOr<SlotVocabulary> WriteTokenizer(
    const TextEncoderSlot& slot, const std::string& corpus,
    const std::filesystem::path& dir) {
  SlotVocabulary vocabulary;
  if (slot.kind == TextEncoderSlot::Kind::kT5) {
    ASSIGN_OR_RETURN(vocabulary.t5,
                     WriteT5Tokenizer(corpus, kT5Pieces, dir.string()));
  } else {
    ASSIGN_OR_RETURN(vocabulary.clip,
                     WriteClipTokenizer(corpus, kClipMerges,
                                        slot.clip_pad_token, dir.string()));
  }
  return vocabulary;
}

// Builds the slot's encoder from the config it writes, so the folder and the
// weights agree by construction.
absl::Status WriteEncoder(const TextEncoderSlot& slot,
                          const EncoderShape& shape,
                          const SlotVocabulary& vocabulary,
                          const std::filesystem::path& dir) {
  const std::string source = (dir / "config.json").string();
  nlohmann::json json;
  std::unique_ptr<torch::nn::Module> module;
  if (slot.kind == TextEncoderSlot::Kind::kT5) {
    json = T5ConfigJson(shape, slot.width, vocabulary.t5);
    ASSIGN_OR_RETURN(models::T5EncoderConfig config,
                     models::T5EncoderConfig::FromJson(json, source));
    module = std::make_unique<models::T5EncoderModel>(config);
  } else {
    const bool projection =
        slot.kind == TextEncoderSlot::Kind::kClipWithProjection;
    json = ClipConfigJson(
        shape, slot.width, vocabulary.clip,
        projection ? "CLIPTextModelWithProjection" : "CLIPTextModel");
    ASSIGN_OR_RETURN(models::CLIPTextConfig config,
                     models::CLIPTextConfig::FromJson(json, source));
    if (projection) {
      module = std::make_unique<models::CLIPTextModelWithProjection>(config);
    } else {
      module = std::make_unique<models::CLIPTextModel>(config);
    }
  }
  return WriteComponentFolder(dir, json, PerturbedWeights(*module),
                              kWeightsFile);
}

const char* EncoderClass(TextEncoderSlot::Kind kind) {
  switch (kind) {
    case TextEncoderSlot::Kind::kClip:
      return "CLIPTextModel";
    case TextEncoderSlot::Kind::kClipWithProjection:
      return "CLIPTextModelWithProjection";
    case TextEncoderSlot::Kind::kT5:
      return "T5EncoderModel";
  }
  return "";
}

// Adds the slots' components to an existing model_index.json.
absl::Status ListInModelIndex(const std::vector<TextEncoderSlot>& slots,
                              const std::filesystem::path& root) {
  const std::filesystem::path path = root / "model_index.json";
  absl::StatusOr<nlohmann::json> index = base::ReadJsonFile(path.string());
  if (!index.ok()) {
    return absl::FailedPreconditionError(
        absl::StrCat("the text components are listed in the pipeline's "
                     "model_index.json, which must be written first: ",
                     index.status().message()));
  }
  for (const TextEncoderSlot& slot : slots) {
    const bool t5 = slot.kind == TextEncoderSlot::Kind::kT5;
    (*index)[slot.text_encoder] = {"transformers", EncoderClass(slot.kind)};
    (*index)[slot.tokenizer] = {"transformers",
                                t5 ? "T5Tokenizer" : "CLIPTokenizer"};
  }
  return WriteJsonFile(path, *index);
}

}  // namespace

absl::Status WriteTextComponents(CheckpointPreset preset, uint64_t seed,
                                 const std::vector<TextEncoderSlot>& slots,
                                 const std::string& out_dir) {
  const EncoderShape shape = ShapeOf(preset);
  for (const TextEncoderSlot& slot : slots) {
    RETURN_IF_ERROR(CheckWidth(slot.kind == TextEncoderSlot::Kind::kT5
                                   ? "T5 d_model"
                                   : "CLIP hidden size",
                               slot.width, shape.heads));
  }
  const std::filesystem::path root(out_dir);
  const std::string corpus = BuiltInEnglishCorpus();
  std::vector<SlotVocabulary> vocabularies;
  for (const TextEncoderSlot& slot : slots) {
    ASSIGN_OR_RETURN(SlotVocabulary vocabulary,
                     WriteTokenizer(slot, corpus, root / slot.tokenizer));
    vocabularies.push_back(vocabulary);
  }
  RETURN_IF_ERROR(base::Guarded(
      absl::StrCat("initialising the text encoders for ", out_dir),
      [&]() -> absl::Status {
        torch::manual_seed(seed);
        const models::RandomParameters drawn_as_torch_does;
        for (size_t i = 0; i < slots.size(); ++i) {
          RETURN_IF_ERROR(WriteEncoder(slots[i], shape, vocabularies[i],
                                       root / slots[i].text_encoder));
        }
        return absl::OkStatus();
      }));
  return ListInModelIndex(slots, root);
}

}  // namespace ditserve::checkpoints
