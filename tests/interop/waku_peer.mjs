// A participant running @waku/sds, the reference JavaScript SDS, for the
// interop tests.
//
//   WAKU_SDS_DIR=<node_modules>/@waku/sds node waku_peer.mjs CHANNEL SENDER
//
// SDS datagrams travel over real UDP on 127.0.0.1, as the app's do, so what
// the tests prove includes the sizes (an 18,752-byte filter plus 200 history
// entries per message) passing a real socket. Control travels over
// stdin/stdout as JSON lines: ordered and reliable, so a test never mistakes
// a lost command for a protocol failure. The script never decides anything
// on its own: it receives, and it sends, resends or syncs when told.
//
// Commands (stdin): {"cmd": "peer", "port": P} (where our datagrams go),
// "send" {text}, "ephemeral" {text}, "sync", "resend" (every message its
// outgoing buffer holds), "state", "hashes" {items, max}, "filter" {ids} (a
// filter's bytes, base64), "lookup" {data, ids}, "decode" {data}, "quit".
// Everything it has to say is one JSON object per line on stdout, with an
// "event" key.

import dgram from "node:dgram";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { pathToFileURL } from "node:url";

const pkgDir = process.env.WAKU_SDS_DIR;
const pkg = JSON.parse(readFileSync(join(pkgDir, "package.json"), "utf8"));
const sds = await import(pathToFileURL(join(pkgDir, pkg.exports["."].import)).href);
const { MessageChannel, MessageChannelEvent, Message } = sds;

const [channelId, senderId] = process.argv.slice(2);
const channel = new MessageChannel(channelId, senderId); // the package's defaults, untouched
const socket = dgram.createSocket("udp4");
let peerPort = null;

const emit = (obj) =>
  process.stdout.write(JSON.stringify(obj, (_, v) => (typeof v === "bigint" ? v.toString() : v)) + "\n");
const b64 = (bytes) => Buffer.from(bytes).toString("base64");
const transmit = async (message) => {
  const bytes = message.encode();
  if (peerPort !== null) socket.send(bytes, peerPort, "127.0.0.1");
  emit({ event: "datagram", id: message.messageId, bytes: bytes.length });
  return { success: true };
};

const reported = {
  [MessageChannelEvent.InMessageDelivered]: (d) => ({ id: d }),
  [MessageChannelEvent.OutMessageAcknowledged]: (d) => ({ id: d }),
  [MessageChannelEvent.OutMessagePossiblyAcknowledged]: (d) => ({ id: d.messageId, count: d.count }),
  [MessageChannelEvent.InMessageMissing]: (d) => (d.length ? { ids: d.map((e) => e.messageId) } : null),
  [MessageChannelEvent.ErrorTask]: (d) => ({ command: d.command, error: String(d.error) })
};
for (const [name, detail] of Object.entries(reported)) {
  channel.addEventListener(name, (e) => {
    const body = detail(e.detail);
    if (body) emit({ event: name, ...body });
  });
}

function describe(msg) {
  return {
    id: msg.messageId,
    sender: msg.senderId,
    channel: msg.channelId,
    lamport: msg.lamportTimestamp,
    history: msg.causalHistory.map((e) => ({ id: e.messageId, sender: e.senderId ?? null })),
    filter_bytes: msg.bloomFilter ? msg.bloomFilter.length : null,
    content: msg.content ? b64(msg.content) : null
  };
}

// Datagrams and commands take turns, each run to the end before the next.
let queue = Promise.resolve();
const serially = (work) => {
  queue = queue.then(work).catch((error) => emit({ event: "error", error: String(error) }));
};

socket.on("message", (data) => serially(async () => {
  const msg = Message.decode(new Uint8Array(data));
  if (msg === undefined) {
    emit({ event: "undecodable", bytes: data.length });
    return;
  }
  emit({ event: "received", ...describe(msg) });
  channel.pushIncomingMessage(msg, undefined);
  await channel.processTasks();
  channel.sweepIncomingBuffer();
}));

const commands = {
  peer: async (c) => {
    peerPort = c.port;
  },
  send: async (c) => {
    channel.pushOutgoingMessage(new TextEncoder().encode(c.text), transmit);
    await channel.processTasks();
    emit({ event: "sent", id: MessageChannel.getMessageId(new TextEncoder().encode(c.text)) });
  },
  ephemeral: async (c) => {
    await channel.pushOutgoingEphemeralMessage(new TextEncoder().encode(c.text), transmit);
    await channel.processTasks();
    emit({ event: "sent_ephemeral" });
  },
  sync: async () => {
    emit({ event: "synced", sent: await channel.pushOutgoingSyncMessage(transmit) });
  },
  resend: async () => {
    const { unacknowledged, possiblyAcknowledged } = channel.sweepOutgoingBuffer();
    for (const message of [...unacknowledged, ...possiblyAcknowledged]) await transmit(message);
    emit({ event: "resent", ids: [...unacknowledged, ...possiblyAcknowledged].map((m) => m.messageId) });
  },
  state: async () => {
    // localHistory and incomingBuffer are private in its TypeScript, plain fields at run time
    const { unacknowledged, possiblyAcknowledged } = channel.sweepOutgoingBuffer();
    const ids = (messages) => messages.map((m) => m.messageId);
    emit({
      event: "state",
      log: ids(channel.localHistory.slice()),
      outgoing: ids(unacknowledged),
      possibly: ids(possiblyAcknowledged),
      incoming: ids(channel.incomingBuffer)
    });
  },
  // The filter functions of the package itself, reached through the filter
  // every MessageChannel holds (the package exports no hashN of its own).
  hashes: async (c) => {
    const filter = channel.filter;
    emit({
      event: "hashes",
      k: filter.kHashes,
      bits: filter.totalBits,
      words: filter.data.length,
      hashes: c.items.map((item) => [0, 1, 2, 5, 9].map((n) => filter.hashN(item, n, c.max ?? filter.totalBits)))
    });
  },
  filter: async (c) => {
    const filter = new channel.filter.constructor(channel.filter.options);
    for (const id of c.ids) filter.insert(id);
    emit({ event: "filter", data: b64(filter.toBytes()) });
  },
  lookup: async (c) => {
    const bytes = new Uint8Array(Buffer.from(c.data, "base64"));
    try {
      const filter = channel.filter.constructor.fromBytes(bytes, channel.filter.options);
      emit({ event: "lookup", found: c.ids.map((id) => filter.lookup(id)) });
    } catch (error) {
      emit({ event: "lookup", error: String(error) });
    }
  },
  decode: async (c) => {
    const msg = Message.decode(new Uint8Array(Buffer.from(c.data, "base64")));
    emit(msg === undefined ? { event: "decoded", error: "undecodable" } : { event: "decoded", ...describe(msg) });
  },
  quit: async () => {
    socket.close();
    process.exit(0);
  }
};

socket.bind(0, "127.0.0.1", () => {
  emit({ event: "ready", port: socket.address().port, sender: senderId });
  const lines = createInterface({ input: process.stdin });
  lines.on("line", (line) => serially(async () => {
    const c = JSON.parse(line);
    const run = commands[c.cmd];
    if (!run) emit({ event: "error", error: `unknown command ${c.cmd}` });
    else await run(c);
  }));
  lines.on("close", () => serially(async () => process.exit(0)));
});
