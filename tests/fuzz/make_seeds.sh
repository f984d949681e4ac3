#!/usr/bin/env bash
# Writes the seed corpus of every fuzz target into tests/fuzz/<target>/ from
# valid inputs: requests as clients send them (protoc --encode of text
# protos), control frames as rank 0 sends them, safetensors files and an
# index as diffusers writes them, prompts. Run it after changing one of
# those formats, and commit what it writes.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
proto_dir="$here/../../proto"

encode() {  # encode MESSAGE OUT < text proto
  protoc --encode="ditserve.v1.$1" -I "$proto_dir" \
    ditserve/v1/generation.proto ditserve/v1/control.proto >"$2"
}

rm -rf "$here"/{freeze,control_frame,safetensors,checkpoint_index,t5_tokenizer,clip_tokenizer,openai_images}
mkdir -p "$here"/{freeze,control_frame,safetensors,checkpoint_index,t5_tokenizer,clip_tokenizer,openai_images}

# freeze: GenerateRequest bytes.
encode GenerateRequest "$here/freeze/flux_dev_minimal" <<'EOF'
model: "flux-dev"
prompt: "a lighthouse at dusk"
EOF
encode GenerateRequest "$here/freeze/flux_dev_full" <<'EOF'
model: "flux-dev"
prompt: "a lighthouse at dusk, number 0"
prompt: "a lighthouse at dusk, number 1"
height: 128 width: 128 num_inference_steps: 2 guidance_scale: 3.5 seed: 42
max_sequence_length: 256 output_format: OUTPUT_FORMAT_RGB8 request_id: "req-1"
EOF
encode GenerateRequest "$here/freeze/sd3_negative" <<'EOF'
model: "sd3-medium"
prompt: "a red fox in snow" negative_prompt: "blurry"
height: 512 width: 768 num_inference_steps: 28 guidance_scale: 7
validate_only: true
EOF
encode GenerateRequest "$here/freeze/pixart_binning" <<'EOF'
model: "pixart-sigma"
prompt: "an astronaut riding a horse"
height: 1024 width: 640 use_resolution_binning: true
EOF
encode GenerateRequest "$here/freeze/cogvideox_video" <<'EOF'
model: "cogvideox1.5-5b"
prompt: "waves on a rocky shore"
height: 160 width: 256 num_frames: 17 fps: 16 use_dynamic_cfg: true
output_format: OUTPUT_FORMAT_MP4
EOF
encode GenerateRequest "$here/freeze/flux_dev_tiled" <<'EOF'
model: "flux-dev"
prompt: "a lighthouse at dusk"
height: 2048 width: 1536 vae_tiling: true
EOF
encode GenerateRequest "$here/freeze/flux_dev_jpeg" <<'EOF'
model: "flux-dev"
prompt: "a lighthouse at dusk"
output_format: OUTPUT_FORMAT_JPEG output_quality: 85
EOF
encode GenerateRequest "$here/freeze/cogvideox_webp" <<'EOF'
model: "cogvideox-5b"
prompt: "waves on a rocky shore"
height: 160 width: 256 num_frames: 17 output_format: OUTPUT_FORMAT_WEBP
EOF

# control_frame: the int64 header {kind, length}, then the body.
frame() {  # frame KIND MESSAGE OUT < text proto
  local body
  body=$(mktemp)
  encode "$2" "$body"
  python3 -c 'import struct, sys
body = open(sys.argv[2], "rb").read()
sys.stdout.buffer.write(struct.pack("<qq", int(sys.argv[1]), len(body)) + body)' \
    "$1" "$body" >"$3"
  rm -f "$body"
}
frame 1 RunConfig "$here/control_frame/run" <<'EOF'
config {
  sequence_number: 1 request_id: "req-1" model: "flux-dev"
  prompt: "a lighthouse at dusk, number 0"
  height: 128 width: 128 num_frames: 1 num_inference_steps: 2
  guidance_scale: 3.5 use_guidance_embedding: true seeds: 42
  max_sequence_length: 256 scheduler: SCHEDULER_KIND_FLOW_MATCH_EULER
  scheduler_shift: 3 scheduler_dynamic_shift: true
  output_format: OUTPUT_FORMAT_PNG
  parallel { world_size: 2 dp_degree: 1 cfg_degree: 1 pipefusion_degree: 1
             ring_degree: 1 ulysses_degree: 2 num_pipeline_patch: 1
             warmup_steps: 1 }
  shapes { latent_height: 16 latent_width: 16 latent_channels: 16
           patch_size: 2 image_tokens: 64 text_tokens: 256
           sequence_tokens: 320 padded_sequence_tokens: 320
           shard_tokens: 160 pipefusion_patch_token_offsets: [0, 64]
           dp_group_prompt_offsets: [0, 1] max_batch_per_dp_group: 1
           guidance_branches: 1 branches_per_cfg_rank: 1
           generated_height: 128 generated_width: 128 latent_frames: 1
           image_latent_shape: [1, 16, 16, 16] }
}
EOF
frame 2 Ping "$here/control_frame/ping" <<'EOF'
sequence: 17 sent_unix_micros: 1764115200000000
EOF
frame 3 Shutdown "$here/control_frame/shutdown" <<'EOF'
reason: "host draining"
EOF
frame 2 Ping "$here/control_frame/ping_empty" </dev/null

# safetensors: files as WriteSafetensors and diffusers write them.
python3 - "$here" <<'EOF'
import json, struct, sys
here = sys.argv[1]

def safetensors(path, tensors, metadata=None, pad=True):
    header, data = {}, b""
    for name, (dtype, shape, raw) in tensors.items():
        header[name] = {"dtype": dtype, "shape": shape,
                        "data_offsets": [len(data), len(data) + len(raw)]}
        data += raw
    if metadata:
        header["__metadata__"] = metadata
    text = json.dumps(header, separators=(",", ":")).encode()
    if pad:
        text += b" " * (-len(text) % 8)
    open(path, "wb").write(struct.pack("<Q", len(text)) + text + data)

f32 = lambda *v: struct.pack(f"<{len(v)}f", *v)
safetensors(f"{here}/safetensors/two_tensors", {
    "a": ("F32", [2, 3], f32(0, 1, 2, 3, 4, 5)),
    "b": ("BF16", [4], b"\x80\x3f" * 4)}, {"format": "pt"})
safetensors(f"{here}/safetensors/every_dtype", {
    "f64": ("F64", [1], struct.pack("<d", 1.5)),
    "i64": ("I64", [2], struct.pack("<2q", -1, 7)),
    "f32": ("F32", [1], f32(2.5)),
    "i32": ("I32", [1], struct.pack("<i", -3)),
    "f16": ("F16", [2], b"\x00\x3c" * 2),
    "i16": ("I16", [1], struct.pack("<h", 9)),
    "i8": ("I8", [2], b"\xff\x01"),
    "u8": ("U8", [1, 1], b"\x07"),
    "bool": ("BOOL", [3], b"\x01\x00\x01")})
safetensors(f"{here}/safetensors/empty_and_scalar", {
    "empty": ("F32", [0, 4], b""),
    "scalar": ("F32", [], f32(1.0))}, pad=False)
safetensors(f"{here}/safetensors/no_tensors", {}, {"total_size": "0"})

# checkpoint_index: diffusers' weight maps over the fuzzer's shards
# s1.safetensors ("a", "b") and s2.safetensors ("c").
def index(name, weight_map, metadata=None):
    body = {"weight_map": weight_map}
    if metadata is not None:
        body = {"metadata": metadata, **body}
    open(f"{here}/checkpoint_index/{name}", "w").write(
        json.dumps(body, indent=2) + "\n")
index("two_shards", {"a": "s1.safetensors", "b": "s1.safetensors",
                     "c": "s2.safetensors"}, {"total_size": 64})
index("one_shard", {"a": "s1.safetensors", "b": "s1.safetensors"})
index("missing_tensor", {"a": "s1.safetensors", "z": "s2.safetensors"})
EOF

# Tokenizers: prompts, with special tokens and text the cleaners change.
printf '%s' 'a lighthouse at dusk' >"$here/t5_tokenizer/plain"
printf '%s' 'Hello </s> world<pad> <extra_id_0> <unk>' >"$here/t5_tokenizer/specials"
printf '%s' 'Ｆｕｌｌｗｉｄｔｈ café ﬁ № ½ —  tabs	and
newlines' >"$here/t5_tokenizer/nfkc"
printf '%s' '東京の夜景、ネオン 🌃' >"$here/t5_tokenizer/cjk_emoji"
printf '%s' 'a photo of a cat' >"$here/clip_tokenizer/plain"
printf '%s' '<|startoftext|>A DOG<|endoftext|> running, 3.5 times!!' \
  >"$here/clip_tokenizer/specials"
printf '%s' 'Café  naïve   Ünïcödé &amp; don'"'"'t we'"'"'ll' \
  >"$here/clip_tokenizer/accents_contractions"
printf '%s' '東京の夜景、ネオン 🌃 ١٢٣' >"$here/clip_tokenizer/cjk_emoji"

# openai_images: HTTP API bodies, as the SDKs and curl send them.
printf '%s' '{"prompt": "a lighthouse at dusk"}' >"$here/openai_images/minimal"
printf '%s' '{"model": "flux-dev", "prompt": "a fox", "n": 2, "size": "256x256",
 "response_format": "b64_json", "output_format": "jpeg",
 "output_compression": 80, "user": "u-1", "num_inference_steps": 4,
 "guidance_scale": 3.5, "seed": "42", "max_sequence_length": 64,
 "request_id": "r-1", "priority": 3, "stream": true, "partial_images": 0}' \
  >"$here/openai_images/full"
printf '%s' '{"prompt": "a fox", "size": "70x64", "n": 9, "quality": "hd"}' \
  >"$here/openai_images/refused"
