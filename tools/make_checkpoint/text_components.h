#ifndef DITSERVE_TOOLS_MAKE_CHECKPOINT_TEXT_COMPONENTS_H_
#define DITSERVE_TOOLS_MAKE_CHECKPOINT_TEXT_COMPONENTS_H_

// The text half of a random FLUX checkpoint: the CLIP-L and T5 encoders and
// their tokenizers, as transformers' save_pretrained lays them out.

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "tools/make_checkpoint/flux_checkpoint.h"

namespace ditserve::tools {

// Writes under `out_dir`:
//   tokenizer/       CLIP byte-level BPE: vocab.json (the 256 byte symbols,
//                    the same with "</w>", the merges learned from the
//                    built-in English corpus, <|startoftext|>,
//                    <|endoftext|>), merges.txt, tokenizer_config.json,
//                    special_tokens_map.json;
//   tokenizer_2/     T5: spiece.model trained on the same corpus by
//                    SentencePiece's trainer, 100 <extra_id_N> sentinels
//                    after it, tokenizer_config.json, special_tokens_map.json,
//                    added_tokens.json;
//   text_encoder/    CLIPTextModel (quick_gelu, 77 positions, hidden size
//                    `clip_hidden_size`, the pooled projection's input);
//   text_encoder_2/  T5EncoderModel (gated-gelu, d_model `t5_d_model`, the
//                    transformer's joint attention input);
// and lists the four in `out_dir`/model_index.json, which must exist.
// Encoder weights are the modules' initialisation under
// torch::manual_seed(seed) plus 0.02 N(0, 1) noise; the tokenizers do not
// depend on the seed. The same arguments give byte-identical files.
// INVALID_ARGUMENT when a dimension is not a positive multiple of the
// preset's head count; NOT_FOUND when the SentencePiece trainer is missing.
absl::Status WriteFluxTextComponents(CheckpointPreset preset, uint64_t seed,
                                     int t5_d_model, int clip_hidden_size,
                                     const std::string& out_dir);

}  // namespace ditserve::tools

#endif  // DITSERVE_TOOLS_MAKE_CHECKPOINT_TEXT_COMPONENTS_H_
