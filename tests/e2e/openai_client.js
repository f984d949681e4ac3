// The official OpenAI SDK against ditserve's HTTP API, as an application
// backend written for OpenAI's Images API would call it. Prints one JSON
// object describing what it saw; exits non-zero when a call that should
// succeed fails.
//
//   node openai_client.js http://127.0.0.1:PORT/v1 MODEL
'use strict';

const OpenAI = require('openai');

// PNG: the signature, then IHDR's width and height (big-endian).
function describePng(b64) {
  const bytes = Buffer.from(b64, 'base64');
  return {
    png_signature: bytes.subarray(0, 8).toString('hex'),
    width: bytes.readUInt32BE(16),
    height: bytes.readUInt32BE(20),
    b64_json: b64,
  };
}

async function refusal(promise) {
  try {
    await promise;
    return {status: 200};
  } catch (error) {
    return {
      status: error.status,
      class: error.constructor.name,
      message: error.message,
      code: error.code,
      param: error.param,
    };
  }
}

async function main() {
  const [baseURL, model] = process.argv.slice(2);
  const client = new OpenAI({
    baseURL,
    apiKey: 'unused-without-auth',
    maxRetries: 0,
    timeout: 300000,
  });
  const withDefaultRetries = new OpenAI({baseURL, apiKey: 'unused-without-auth'});
  const generated = await client.images.generate({
    model,
    prompt: 'a lighthouse at dusk',
    n: 2,
    size: '48x64',
    response_format: 'b64_json',
    user: 'e2e-test',
    // OpenAI's defaults, which LangChain.js's DALL-E wrapper always sends.
    quality: 'standard',
    style: 'vivid',
    // ditserve's own fields travel in the same body.
    num_inference_steps: 2,
    seed: 7,
    max_sequence_length: 32,
  });
  // OpenAI's fields for its lossy formats.
  const jpeg = await client.images.generate({
    model,
    prompt: 'a lighthouse at dusk',
    size: '48x64',
    output_format: 'jpeg',
    output_compression: 80,
    num_inference_steps: 2,
    seed: 7,
    max_sequence_length: 32,
  });
  // stream: true, as OpenAI streams images: the SDK yields each event's data.
  const stream = await client.images.generate({
    model,
    prompt: 'a lighthouse at dusk',
    size: '48x64',
    stream: true,
    num_inference_steps: 2,
    seed: 7,
    max_sequence_length: 32,
  });
  const streamed = [];
  for await (const event of stream) streamed.push(event);
  // OpenAI's partial_images: previews streamed while the image denoises.
  const previewStream = await client.images.generate({
    model,
    prompt: 'a lighthouse at dusk',
    size: '48x64',
    stream: true,
    partial_images: 2,
    num_inference_steps: 3,
    seed: 7,
    max_sequence_length: 32,
  });
  const previewed = [];
  for await (const event of previewStream) {
    if (event.type !== 'ditserve.progress') previewed.push(event);
  }
  const models = await client.models.list();
  const summary = {
    images: generated.data.map((image) => describePng(image.b64_json)),
    jpeg: {
      output_format: jpeg.output_format,
      b64_json: jpeg.data[0].b64_json,
    },
    streamed,
    previewed,
    created: generated.created,
    seed: generated.seed,
    models: models.data.map((entry) => entry.id),
    bad_size: await refusal(client.images.generate(
        {model, prompt: 'x', size: '50x64', num_inference_steps: 2})),
    too_many: await refusal(client.images.generate(
        {model, prompt: 'x', n: 99, num_inference_steps: 2})),
    url_format: await refusal(client.images.generate(
        {model, prompt: 'x', response_format: 'url'})),
    bad_compression: await refusal(client.images.generate(
        {model, prompt: 'x', output_format: 'webp', output_compression: 101})),
    unstreamed_previews: await refusal(client.images.generate(
        {model, prompt: 'x', partial_images: 1, num_inference_steps: 2})),
    hd_quality: await refusal(client.images.generate(
        {model, prompt: 'x', quality: 'hd', num_inference_steps: 2})),
    other_model: await refusal(
        client.images.generate({model: 'dall-e-3', prompt: 'x'})),
    // Above the host's --max_request_bytes, with the SDK's default retries.
    too_large: await refusal(withDefaultRetries.images.generate(
        {model, prompt: 'x', size: '1024x1024', num_inference_steps: 2})),
  };
  console.log(JSON.stringify(summary));
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
