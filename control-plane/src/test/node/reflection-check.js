// A third-party reflection client (grpc-js-reflection-client on @grpc/grpc-js) against the
// control plane: list services over reflection v1alpha and v1, build a ControlPlaneInspection
// client purely from the reflected descriptors, and call it. Prints one JSON object on stdout.
// Usage: node reflection-check.js HOST:PORT NODE FROM TO PORT
'use strict';
const grpc = require('@grpc/grpc-js');
const { GrpcReflection } = require('grpc-js-reflection-client');

const [target, node, from, to, port] = process.argv.slice(2);
const INSPECTION = 'kubeverdict.v1.ControlPlaneInspection';

function call(client, method, request) {
  return new Promise((resolve, reject) => {
    client[method](request, { deadline: Date.now() + 20000 }, (err, res) => (err ? reject(err) : resolve(res)));
  });
}

async function main() {
  const creds = grpc.credentials.createInsecure();
  const out = {};
  for (const version of ['v1alpha', 'v1']) {
    const reflection = new GrpcReflection(target, creds, {}, version);
    out[version] = { services: (await reflection.listServices()).sort() };
  }
  const reflection = new GrpcReflection(target, creds);
  const descriptor = await reflection.getDescriptorBySymbol(INSPECTION);
  const pkg = descriptor.getPackageObject({ keepCase: true, longs: String, enums: String, defaults: true, oneofs: true });
  const Inspection = pkg.kubeverdict.v1.ControlPlaneInspection;
  const client = new Inspection(target, creds);
  out.listNodes = await call(client, 'ListNodes', {});
  out.snapshot = await call(client, 'GetSnapshot', { node });
  out.explain = await call(client, 'Explain', { from, to, tuple: { protocol: 6, dst_port: Number(port) } });
  client.close();
  process.stdout.write(JSON.stringify(out) + '\n');
}

main().catch((e) => {
  process.stderr.write(String(e && e.stack ? e.stack : e) + '\n');
  process.exit(1);
});
