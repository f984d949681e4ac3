#ifndef DITSERVE_CORE_CHECKPOINTS_TEXT_COMPONENTS_H_
#define DITSERVE_CORE_CHECKPOINTS_TEXT_COMPONENTS_H_

// The text half of a random checkpoint: CLIP and T5 encoders and their
// tokenizers, as transformers' save_pretrained lays them out.

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "core/checkpoints/component_writer.h"

namespace ditserve::checkpoints {

// One text encoder of a pipeline and its tokenizer.
struct TextEncoderSlot {
  enum class Kind {
    // CLIPTextModel (FLUX's CLIP-L).
    kClip,
    // CLIPTextModelWithProjection (SD3's CLIP-L and CLIP-G).
    kClipWithProjection,
    // T5EncoderModel.
    kT5,
  };
  Kind kind = Kind::kClip;
  // CLIP hidden size (also its projection_dim), or T5 d_model.
  int width = 0;
  // Folder names under the checkpoint, e.g. "tokenizer_2", "text_encoder_2".
  std::string tokenizer;
  std::string text_encoder;
  // CLIP only: the tokenizer's pad token (SD3's CLIP-G pads with "!").
  std::string clip_pad_token = "<|endoftext|>";
};

// Writes each slot under `out_dir`:
//   CLIP tokenizer: byte-level BPE vocab.json (the 256 byte symbols, the same
//                   with "</w>", the merges learned from the built-in English
//                   corpus, <|startoftext|>, <|endoftext|>), merges.txt,
//                   tokenizer_config.json, special_tokens_map.json;
//   T5 tokenizer:   spiece.model trained on the same corpus by
//                   SentencePiece's trainer, 100 <extra_id_N> sentinels after
//                   it, tokenizer_config.json, special_tokens_map.json,
//                   added_tokens.json;
//   CLIP encoder:   quick_gelu, 77 positions, hidden size `width`;
//   T5 encoder:     gated-gelu, d_model `width`;
// and lists them in `out_dir`/model_index.json, which must exist. Encoder
// weights are the modules' initialisation under torch::manual_seed(seed),
// in slot order, plus 0.02 N(0, 1) noise; the tokenizers do not depend on the
// seed. The same arguments give byte-identical files. INVALID_ARGUMENT when a
// width is not a positive multiple of the preset's head count;
// FAILED_PRECONDITION without model_index.json; NOT_FOUND when the
// SentencePiece trainer is missing.
absl::Status WriteTextComponents(CheckpointPreset preset, uint64_t seed,
                                 const std::vector<TextEncoderSlot>& slots,
                                 const std::string& out_dir);

}  // namespace ditserve::checkpoints

#endif  // DITSERVE_CORE_CHECKPOINTS_TEXT_COMPONENTS_H_
