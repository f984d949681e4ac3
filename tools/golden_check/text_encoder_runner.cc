// Golden cases of transformers' text encoders: T5EncoderModel (with and
// without the attention mask) and CLIPTextModel / CLIPTextModelWithProjection
// (unmasked with every hidden state, then masked), as each case's
// forward_code runs them, on CPU in float32.

#include <torch/torch.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/base/status_macros.h"
#include "core/models/component_weights.h"
#include "core/models/text/clip_text_model.h"
#include "core/models/text/t5_encoder_model.h"
#include "tools/golden_check/runners.h"

namespace ditserve::golden {
namespace {

struct EncoderInputs {
  at::Tensor input_ids;
  at::Tensor attention_mask;
};

absl::StatusOr<EncoderInputs> ReadEncoderInputs(const GoldenCase& golden_case) {
  ASSIGN_OR_RETURN(
      io::TensorMap inputs,
      golden_case.ReadModelInputs("inputs_file", "inputs.safetensors"));
  EncoderInputs out;
  for (auto [name, target] :
       {std::pair{"input_ids", &out.input_ids},
        std::pair{"attention_mask", &out.attention_mask}}) {
    auto it = inputs.find(name);
    if (it == inputs.end()) {
      return absl::InvalidArgumentError(absl::StrCat(
          golden_case.dir, ": the inputs file has no \"", name, "\""));
    }
    *target = it->second;
  }
  return out;
}

// CLIPTextOutput as the case names it: `suffix` is "" or "_masked".
void AddCLIPOutputs(const models::CLIPTextOutput& out,
                    const std::string& suffix, io::TensorMap* outputs) {
  (*outputs)["last_hidden_state" + suffix] = out.last_hidden_state;
  (*outputs)["pooler_output" + suffix] = out.pooler_output;
  if (out.text_embeds.defined()) {
    (*outputs)["text_embeds" + suffix] = out.text_embeds;
  }
  if (!suffix.empty()) return;
  for (size_t i = 0; i < out.hidden_states.size(); ++i) {
    (*outputs)[absl::StrCat("hidden_states.", i)] = out.hidden_states[i];
  }
}

template <typename Model>
absl::StatusOr<std::vector<OutputComparison>> RunCLIPCase(
    const GoldenCase& golden_case,
    absl::StatusOr<std::shared_ptr<Model>> (*load)(const std::string&,
                                                   const models::Placement&)) {
  ASSIGN_OR_RETURN(EncoderInputs inputs, ReadEncoderInputs(golden_case));
  ASSIGN_OR_RETURN(std::shared_ptr<Model> model,
                   load(golden_case.dir, golden_case.placement));

  io::TensorMap outputs;
  ASSIGN_OR_RETURN(models::CLIPTextOutput plain,
                   model->Forward(inputs.input_ids));
  AddCLIPOutputs(plain, "", &outputs);
  ASSIGN_OR_RETURN(models::CLIPTextOutput masked,
                   model->Forward(inputs.input_ids, inputs.attention_mask));
  AddCLIPOutputs(masked, "_masked", &outputs);
  return CompareWithReferenceOutputs(golden_case, outputs);
}

}  // namespace

absl::StatusOr<std::vector<OutputComparison>> RunT5EncoderCase(
    const GoldenCase& golden_case) {
  ASSIGN_OR_RETURN(EncoderInputs inputs, ReadEncoderInputs(golden_case));
  ASSIGN_OR_RETURN(
      std::shared_ptr<models::T5EncoderModel> model,
      models::LoadT5EncoderModel(golden_case.dir, golden_case.placement));

  io::TensorMap outputs;
  ASSIGN_OR_RETURN(at::Tensor masked,
                   model->Forward(inputs.input_ids, inputs.attention_mask));
  outputs["last_hidden_state"] = masked;
  // The FLUX and SD3 pipelines call T5 without a mask.
  ASSIGN_OR_RETURN(at::Tensor unmasked, model->Forward(inputs.input_ids));
  outputs["last_hidden_state_nomask"] = unmasked;
  return CompareWithReferenceOutputs(golden_case, outputs);
}

absl::StatusOr<std::vector<OutputComparison>> RunCLIPTextModelCase(
    const GoldenCase& golden_case) {
  return RunCLIPCase<models::CLIPTextModel>(golden_case,
                                            models::LoadCLIPTextModel);
}

absl::StatusOr<std::vector<OutputComparison>>
RunCLIPTextModelWithProjectionCase(const GoldenCase& golden_case) {
  return RunCLIPCase<models::CLIPTextModelWithProjection>(
      golden_case, models::LoadCLIPTextModelWithProjection);
}

}  // namespace ditserve::golden
