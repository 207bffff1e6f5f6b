// A cuzk client that is not ours: Node's @grpc/grpc-js with @grpc/proto-loader, which reads
// prover/cuzk/proto/cuzk/v1/proving.proto itself (no code of ours in between). Used by
// tests/cuzk/test_node_client.py: node node_client.js TARGET PROTO OUTDIR
// It submits a C2 job and awaits it (the proof bytes to OUTDIR/proof.bin, the request's
// bytes to OUTDIR/request.bin), reads GetStatus, then submits two more and cancels the last
// while it waits, and awaits it. Each answer is one JSON line on stdout.
"use strict";
const fs = require("fs");
const path = require("path");
const grpc = require("@grpc/grpc-js");
const loader = require("@grpc/proto-loader");

const [target, protoFile, outDir] = process.argv.slice(2);
const def = loader.loadSync(protoFile, { keepCase: true, longs: Number, enums: String, defaults: true });
const cuzk = grpc.loadPackageDefinition(def).cuzk.v1;
const limit = 256 * 1024 * 1024; // Curio's
const client = new cuzk.ProvingEngine(target, grpc.credentials.createInsecure(),
  { "grpc.max_receive_message_length": limit, "grpc.max_send_message_length": limit });

const call = (method, req) => new Promise((resolve, reject) => {
  const md = new grpc.Metadata();
  md.set("x-c2tui-client", "node-grpc-js");
  client[method](req, md, { deadline: Date.now() + 240000 }, (err, res) => (err ? reject(err) : resolve(res)));
});
const say = (what, obj) => console.log(JSON.stringify({ what, ...obj }));

(async () => {
  const request = Buffer.from("a C1 output stands here: " + Date.now());
  fs.writeFileSync(path.join(outDir, "request.bin"), request);
  const sub = await call("SubmitProof", { request_id: "node-c2", proof_kind: "POREP_SEAL_COMMIT", vanilla_proof: request });
  say("submit", { job_id: sub.job_id, queue_position: sub.queue_position, assigned_gpu: sub.assigned_gpu });
  const res = await call("AwaitProof", { job_id: sub.job_id, timeout_ms: 0 });
  fs.writeFileSync(path.join(outDir, "proof.bin"), res.proof);
  say("await", { status: res.status, bytes: res.proof.length, queue_wait_ms: res.queue_wait_ms, srs_load_ms: res.srs_load_ms,
                 synthesis_ms: res.synthesis_ms, gpu_compute_ms: res.gpu_compute_ms, total_ms: res.total_ms });
  const st = await call("GetStatus", {});
  say("status", { gpus: st.gpus, loaded_srs: st.loaded_srs, queues: st.queues, completed: st.total_proofs_completed });
  // two more: the first keeps the worker busy, the second waits behind it and is cancelled there
  await call("SubmitProof", { request_id: "node-busy", proof_kind: "POREP_SEAL_COMMIT", vanilla_proof: Buffer.from("busy") });
  const q = await call("SubmitProof", { request_id: "node-queued", proof_kind: "POREP_SEAL_COMMIT", priority: "LOW",
                                        vanilla_proof: Buffer.from("queued") });
  const c = await call("CancelProof", { job_id: q.job_id });
  const cr = await call("AwaitProof", { job_id: q.job_id, timeout_ms: 60000 });
  say("cancel", { queue_position: q.queue_position, was_running: c.was_running, status: cr.status });
  try {
    await call("AwaitProof", { job_id: "no-such-job", timeout_ms: 1 });
    say("unknown", { code: 0 });
  } catch (e) {
    say("unknown", { code: e.code, details: e.details });
  }
  client.close();
})().catch((e) => { console.error("node client: " + (e.details || e.message)); process.exit(1); });
