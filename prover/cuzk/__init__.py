"""cuzk's wire (Curio's proving daemon, gRPC `cuzk.v1.ProvingEngine`) over c2tui's prover.

    server = CuzkServer(engine, "unix:///run/c2tui/cuzk.sock").start()   # before engine.start()
    ...
    server.close()

- proto/cuzk/v1/proving.proto: the schema, field for field cuzk's (its header says where from);
  proving_pb2.py is generated from it (regen.py) and committed.
- service.py binds the service's methods from the schema's descriptor (server and client);
  kinds.py maps cuzk's proof kinds and priorities to our proof classes; jobs.py is the job
  table fed by the engine's events; servicer.py answers the RPCs; server.py listens (a Unix
  socket 0600 or loopback TCP with tokens) within bounds; status_json.py is cuzk's HTTP
  /status shape from our fold; watch.py turns a cuzk daemon's GetStatus and /status into our
  events (`c2tui attach --cuzk`); proof_dir.py lays a job's proof bytes out for `c2tui verify`.

Nothing here imports c2tui or textual (docs/cuzk.md).
"""
