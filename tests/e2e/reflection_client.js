// A gRPC client that knows nothing of ditserve's .proto files: everything it
// sends is built from descriptors fetched over server reflection, as grpcurl
// does. Prints one JSON object describing what it saw; exits non-zero on any
// failed call.
//
//   node reflection_client.js HOST:PORT '{"prompt":["a fox"],"height":64}'
'use strict';

const grpc = require('@grpc/grpc-js');
const {GrpcReflection} = require('grpc-js-reflection-client');

const CALL_TIMEOUT_MS = 600000;

function unary(client, method, request) {
  return new Promise((resolve, reject) => {
    const deadline = new Date(Date.now() + CALL_TIMEOUT_MS);
    client[method](request, {deadline}, (err, response) => {
      if (err) reject(err);
      else resolve(response);
    });
  });
}

async function clientFor(reflection, address, service) {
  const descriptor = await reflection.getDescriptorBySymbol(service);
  const pkg = descriptor.getPackageObject({
    keepCase: true,
    enums: String,
    longs: String,
    defaults: false,
  });
  const Service = service.split('.').reduce((obj, key) => obj[key], pkg);
  return new Service(address, grpc.credentials.createInsecure(), {
    'grpc.max_receive_message_length': 256 * 1024 * 1024,
  });
}

async function main() {
  const [address, requestJson] = process.argv.slice(2);
  const reflection =
      new GrpcReflection(address, grpc.credentials.createInsecure());
  const services = await reflection.listServices();
  const methods = await reflection.listMethods('ditserve.v1.Generation');

  const health = await clientFor(reflection, address, 'grpc.health.v1.Health');
  const check = await unary(health, 'Check', {service: ''});

  const generation =
      await clientFor(reflection, address, 'ditserve.v1.Generation');
  const info = await unary(generation, 'GetServerInfo', {});
  const response =
      await unary(generation, 'Generate', JSON.parse(requestJson || '{}'));

  const summary = {
    services: services.sort(),
    methods: methods.map((m) => m.name).sort(),
    health: check.status,
    model: info.model,
    images: (response.images || []).map((image) => ({
      mime_type: image.mime_type,
      width: image.width,
      height: image.height,
      bytes: image.data.length,
      png_signature: image.data.subarray(0, 8).toString('hex'),
    })),
    config: response.config,
  };
  process.stdout.write(JSON.stringify(summary) + '\n');
  for (const client of [health, generation]) client.close();
}

main().catch((err) => {
  process.stderr.write(`reflection client failed: ${err.stack || err}\n`);
  process.exit(1);
});
