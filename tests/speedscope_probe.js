/*
** speedscope_probe.js -- run inside speedscope's own page (loaded by its
** "#localProfilePath=" hook, the one its command-line tool uses) by
** tests/test_trace.c. The test prepends one line defining lncsimTrace =
** { name: FILE NAME, b64: THE TRACE FILE IN BASE64 }.
**
** The probe records every console warning and error and every alert
** while speedscope imports the trace, then asks speedscope to export
** what it imported (its Ctrl+S, retried until a profile is loaded) and
** takes the export's file from URL.createObjectURL instead of a
** download (its download link does nothing, so no file is saved). It
** counts the slices ("O" events) of each imported profile (one per
** pid / tid) and writes
**   LNCSIM-PROBE <the result as JSON, URI-encoded> LNCSIM-END
** into the page, which chromium --dump-dom prints. The result is
**   { "warnings": [...], "errors": [...],
**     "profiles": [ { "name": ..., "slices": N }, ... ] }
** with "profiles" null when no export came.
*/
(function () {
	var out = { warnings: [], errors: [], profiles: null };
	var done = false;
	var tries = 0;

	function finish() {
		if (done)
			return;
		done = true;
		var pre = document.createElement("pre");
		pre.id = "lncsim-probe";
		pre.textContent = "LNCSIM-PROBE " +
			encodeURIComponent(JSON.stringify(out)) + " LNCSIM-END";
		document.body.appendChild(pre);
	}

	function record(kind, list) {
		var orig = console[kind];
		console[kind] = function () {
			list.push(Array.prototype.map.call(arguments,
							   String).join(" "));
			return orig.apply(console, arguments);
		};
	}

	function count(text) {
		var f = JSON.parse(text);
		out.profiles = f.profiles.map(function (p) {
			var n = 0;
			(p.events || []).forEach(function (e) {
				n += e.type === "O";
			});
			return { name: p.name, type: p.type, slices: n };
		});
	}

	function save() {
		if (done)
			return;
		if (++tries > 400) {
			out.errors.push("speedscope loaded no profile");
			finish();
			return;
		}
		window.dispatchEvent(new KeyboardEvent("keydown",
			{ key: "s", ctrlKey: true }));
		setTimeout(save, 50);
	}

	record("warn", out.warnings);
	record("error", out.errors);
	window.addEventListener("error", function (ev) {
		out.errors.push("uncaught: " + ev.message);
	});
	window.alert = function (m) {
		out.errors.push("alert: " + m);
		finish();
	};
	var create = URL.createObjectURL;
	URL.createObjectURL = function (blob) {
		blob.text().then(function (text) {
			try {
				count(text);
			} catch (e) {
				out.errors.push("export: " + e);
			}
			finish();
		});
		return create.call(URL, blob);
	};
	/* the export is read above: its download link, clicked, saves
	** nothing */
	var click = HTMLAnchorElement.prototype.click;
	HTMLAnchorElement.prototype.click = function () {
		if (!this.download)
			return click.call(this);
	};
	speedscope.loadFileFromBase64(lncsimTrace.name, lncsimTrace.b64);
	setTimeout(save, 50);
})();
