// kvsimFetchTrace fetches a gzipped trace (the built-in Mooncake
// conversation trace, dist/traces/*.jsonl.gz) for the page's Go code
// (ui/host_js.go, FetchTrace): the body is read as a stream so that
// onProgress(loaded, total) can report the bytes received (total: the
// Content-Length, 0 when unknown); no byte for stallMs aborts it. Then
// DecompressionStream("gzip") inflates it (unless the server already did:
// a body that does not start with gzip's magic bytes is taken as it is).
// onDone(text) on success, onDone(null, httpStatus, stalled, message) on
// failure.
"use strict";
globalThis.kvsimFetchTrace = function (url, stallMs, onProgress, onDone) {
	const ctl = new AbortController();
	let stalled = false, timer = 0, finished = false;
	const arm = () => {
		clearTimeout(timer);
		timer = setTimeout(() => { stalled = true; ctl.abort(); }, stallMs);
	};
	const fail = (status, msg) => {
		if (finished) return;
		finished = true;
		clearTimeout(timer);
		onDone(null, status, stalled, String(msg));
	};
	arm();
	(async () => {
		const res = await fetch(url, {signal: ctl.signal});
		if (!res.ok) {
			await res.body?.cancel();
			return fail(res.status, res.statusText);
		}
		const total = +(res.headers.get("Content-Length") || 0);
		const reader = res.body.getReader();
		const chunks = [];
		let loaded = 0;
		onProgress(0, total);
		for (;;) {
			const {done, value} = await reader.read();
			if (done) break;
			arm();
			chunks.push(value);
			loaded += value.length;
			onProgress(loaded, total);
		}
		clearTimeout(timer);
		onProgress(loaded, total);
		const blob = new Blob(chunks);
		const head = new Uint8Array(await blob.slice(0, 2).arrayBuffer());
		let text;
		if (head[0] === 0x1f && head[1] === 0x8b) {
			text = await new Response(blob.stream().pipeThrough(new DecompressionStream("gzip"))).text();
		} else {
			text = await blob.text();
		}
		if (finished) return;
		finished = true;
		onDone(text, 0, false, "");
	})().catch((e) => fail(0, stalled ? "stalled" : (e && e.message) || e));
};
