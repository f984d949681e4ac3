#ifndef DITSERVE_CORE_FAMILIES_MODEL_DIMENSIONS_H_
#define DITSERVE_CORE_FAMILIES_MODEL_DIMENSIONS_H_

namespace ditserve::families {

// Transformer widths that size receive buffers but are not part of the
// config (the loaded checkpoint fixes them).
struct ModelDimensions {
  // Width of the transformer's hidden states.
  int hidden_size = 0;
  // Channels of the transformer's output (twice the latent channels with
  // PixArt's learned sigma); needed only with cfg_degree 2.
  int transformer_out_channels = 0;
  // Channels of the transformer's output per image token (patch_size² ×
  // out_channels), what the last PipeFusion stage sends; needed only with
  // pipefusion_degree > 1.
  int token_output_channels = 0;
  // Whether PipeFusion stages pass a text stream on (models whose blocks
  // update the text tokens: FLUX, SD3; not PixArt).
  bool stages_pass_text_stream = true;
};

}  // namespace ditserve::families

#endif  // DITSERVE_CORE_FAMILIES_MODEL_DIMENSIONS_H_
