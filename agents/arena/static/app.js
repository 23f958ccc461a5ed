// The arena's page: five views (play, watch, replay, leaderboard, ladder) over the JSON API of agents/arena/server.py.
"use strict";

// renders counts the tables drawn: a script (or a test) driving the page waits for the next one after a click
const BOT_POLL_MS = 300; // how often the page asks whether a bot at the table has moved
const state = { catalogue: null, play: null, watch: null, watchRun: null, watchTimer: null, replay: null, renders: 0, agentNames: [] };

// A request of the JSON API; a failure throws an Error carrying the server's message (its "error", or the start
// of an answer that is not JSON). A request still waiting after a second shows a notice (waitingNotice).
async function api(method, path, body, token) {
  const headers = {};
  if (body !== undefined) headers["Content-Type"] = "application/json";
  if (token) headers.Authorization = `Bearer ${token}`;
  const notice = setTimeout(() => showWaiting(waitingNotice(method, path, body)), 1000);
  try {
    const response = await fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
    const text = await response.text();
    let data = null;
    try {
      data = JSON.parse(text);
    } catch (error) {
      data = null;
    }
    if (!response.ok) {
      const said = data && data.error ? data.error : text.trim().slice(0, 300) || response.statusText;
      throw new Error(`${said} (HTTP ${response.status})`);
    }
    if (data === null) throw new Error(`the server's answer to ${path} is not JSON: ${text.slice(0, 200)}`);
    return data;
  } finally {
    clearTimeout(notice);
    showWaiting(null);
  }
}

// What a slow request is waiting for: a game with the search player while it is still being compiled says so.
function waitingNotice(method, path, body) {
  const names = body && (body.opponents || body.agents);
  const searching = (names && names.includes("search")) || (state.watch && state.watch.view.names.includes("search") && path.endsWith("/step"))
    || (state.play && state.play.view.names.includes("search") && path.includes("/actions"));
  if (searching && state.catalogue && !state.catalogue.search_ready) {
    return "Preparing the search player (a one-time compile on this machine: a minute or two; later starts skip it)…";
  }
  return "Waiting for the server…";
}

function showWaiting(text) {
  const box = document.getElementById("waiting");
  box.hidden = !text;
  box.textContent = text || "";
}

function showError(error) {
  const box = document.getElementById("error");
  box.hidden = !error;
  box.textContent = error ? String(error.message || error) : "";
}

async function guarded(work) {
  try {
    showError(null);
    return await work();
  } catch (error) {
    showError(error);
  }
}

// ------------------------------------------------------------------ pages

function showPage() {
  const page = (location.hash || "#play").slice(1).split("/")[0];
  for (const section of document.querySelectorAll(".page")) section.hidden = section.id !== `page-${page}`;
  for (const link of document.querySelectorAll("nav a")) link.classList.toggle("active", link.dataset.page === page);
  if (page === "leaderboard") loadLeaderboard();
  if (page === "ladder") loadLadder();
  if (page === "replay") fillRecordList();
}

function fillPlayers(select, fallback) {
  for (let n = 2; n <= 10; n++) select.append(el("option", { value: n, text: String(n), selected: n === fallback }));
}

// Every rules option: a checkbox, a choice or a number, with a JSON box for anything else.
function buildRules(fieldset) {
  const { defaults, choices, house_rules: house } = state.catalogue.rules;
  fieldset.append(el("legend", { text: "Rules (house rules marked *)" }));
  for (const [name, value] of Object.entries(defaults)) {
    const title = house.includes(name) ? `${name}*` : name;
    let input;
    if (typeof value === "boolean") input = el("input", { type: "checkbox", checked: value });
    else if (choices[name]) {
      input = el("select", {}, choices[name].map((c) => el("option", { value: c, text: c, selected: c === value })));
    } else input = el("input", { type: "number", value: String(value), min: "0", style: "width: 6rem" });
    input.dataset.option = name;
    fieldset.append(el("label", {}, [`${title} `, input]));
  }
  fieldset.append(el("label", {}, ["more options (JSON) ", el("textarea", { "data-json": "1", placeholder: '{"uno_penalty": 4}' })]));
}

function readRules(fieldset) {
  const { defaults } = state.catalogue.rules;
  const rules = {};
  for (const input of fieldset.querySelectorAll("[data-option]")) {
    const name = input.dataset.option;
    const value = input.type === "checkbox" ? input.checked : input.type === "number" ? Number(input.value) : input.value;
    if (value !== defaults[name]) rules[name] = value;
  }
  const extra = fieldset.querySelector("[data-json]").value.trim();
  if (extra) Object.assign(rules, JSON.parse(extra));
  return rules;
}

function readSetup(form, namesField) {
  const names = form.querySelector(namesField).value.split(",").map((s) => s.trim()).filter(Boolean);
  const seedText = form.querySelector("[name=seed]").value;
  return {
    players: Number(form.querySelector("[name=players]").value),
    names,
    rules: readRules(form.querySelector("fieldset.rules")),
    seed: seedText === "" ? null : Number(seedText),
  };
}

// ------------------------------------------------------------------ play

async function startGame(event) {
  event.preventDefault();
  await guarded(async () => {
    const setup = readSetup(event.target, "[name=opponents]");
    const name = document.getElementById("play-name").value.trim();
    const body = { players: setup.players, opponents: setup.names, rules: setup.rules, seed: setup.seed };
    const created = await api("POST", "/api/games", name ? { ...body, name } : body);
    sessionStorage.setItem("hpuno-game", JSON.stringify(created));
    await resumeGame();
  });
}

async function resumeGame() {
  const saved = JSON.parse(sessionStorage.getItem("hpuno-game") || "null");
  if (!saved) return;
  try {
    state.play = { ...saved, view: await api("GET", `/api/games/${saved.game}`, undefined, saved.token), busy: false };
  } catch (error) {
    sessionStorage.removeItem("hpuno-game"); // dropped after being idle, or the server restarted
    return;
  }
  renderPlay();
  const play = state.play;
  play.busy = true;
  await guarded(() => waitForBots(play));
  play.busy = false;
  renderPlay();
}

// A bot at the table moves through requests of its own: while it is to act, the person's view offers no action,
// so the page asks again until it is the person's turn or the game is over.
async function waitForBots(play) {
  while (!play.view.over && !play.view.legal.length && state.play === play) {
    renderPlay();
    await new Promise((resolve) => setTimeout(resolve, BOT_POLL_MS));
    play.view = await api("GET", `/api/games/${play.game}`, undefined, play.token);
  }
}

async function playAction(label) {
  const play = state.play;
  if (!play || play.busy) return;
  play.busy = true;
  await guarded(async () => {
    play.view = await api("POST", `/api/games/${play.game}/actions`, { action: label }, play.token);
    await waitForBots(play);
  });
  play.busy = false;
  renderPlay();
}

function playStatus(view) {
  if (view.over) {
    const who = view.winner === view.you ? "You won!" : view.winner ? `${view.winner} won.` : "No winner (cut short).";
    return `Game over: ${who} ${savedText(view)}`;
  }
  const hints = {
    play: "play a matching card, or draw", drawn: "play the card you drew, or keep it", color: "name the colour",
    target: view.top.endsWith(":7") ? "choose whom to swap hands with" : "send the Sorting Hat's draw to someone",
    challenge: "a Wild Draw Four was played on you: challenge it or accept", catch: "someone has one card and did not call UNO",
    stack: `stack a draw card, or accept ${view.pending_draw}`, jump: "jump in with the twin of the card just played, or pass",
  };
  if (!view.legal.length) return `Waiting for ${view.current} to move…`;
  return `Your turn: ${hints[view.phase] || view.phase}`;
}

// Where a finished game's record went: its file in the records folder (the Replay page lists it), or why not.
function savedText(view) {
  if (view.record) return `Saved as ${view.record} in the arena's records folder (the Replay page lists it).`;
  return view.record_error ? `Not saved: ${view.record_error}` : "";
}

// A list of lines, oldest first, scrolled to show the newest.
function scrollToEnd(box) {
  if (box) box.scrollTop = box.scrollHeight;
}

function renderPlay() {
  const view = state.play.view;
  const table = document.getElementById("play-table");
  table.hidden = false;
  table.replaceChildren();
  table.dataset.over = String(view.over);
  table.dataset.phase = view.phase;
  table.dataset.renders = String(++state.renders);
  table.append(el("div", { className: "status", id: "play-status", text: playStatus(view) }));
  if (view.warnings.length) table.append(el("div", { className: "shown", text: view.warnings.join(" ") }));
  table.append(tableElement(view, { prefix: "play" }));
  const legal = new Set(view.legal);
  const handActions = new Set();
  const hand = el("div", { className: "hand", id: "play-hand" }, view.hand.map((card) => {
    const action = legal.has(`play:${card}`) ? `play:${card}` : null;
    if (action) handActions.add(action);
    const node = cardElement(card, { action });
    if (!action && view.legal.length) node.classList.add("dim");
    return node;
  }));
  const buttons = el("div", { className: "actions", id: "play-actions" }, view.legal.filter((a) => !handActions.has(a)).map((label) =>
    el("button", { type: "button", "data-action": label, className: label.startsWith("color:") ? label.slice(6) : "", text: actionText(label, view) })));
  table.append(el("h3", { text: "Your hand" }), hand, buttons);
  table.append(linesElement(view.over ? "How it ended" : "Since your last turn", view.events, "play-events", true));
  table.append(linesElement("Game so far", view.history, "play-history"));
  scrollToEnd(document.getElementById("play-history"));
  if (view.over) {
    table.append(el("button", { type: "button", id: "play-again", text: "New game" }));
    table.querySelector("#play-again").addEventListener("click", () => {
      sessionStorage.removeItem("hpuno-game");
      table.hidden = true;
      document.getElementById("play-form").hidden = false;
    });
  }
  document.getElementById("play-form").hidden = !view.over;
}

// ------------------------------------------------------------------ watch

async function startWatch(event) {
  event.preventDefault();
  stopWatch();
  await guarded(async () => {
    const setup = readSetup(event.target, "[name=agents]");
    const created = await api("POST", "/api/watch", { players: setup.players, agents: setup.names, rules: setup.rules, seed: setup.seed });
    state.watch = { ...created, view: await api("GET", `/api/games/${created.game}`, undefined, created.token) };
    document.getElementById("watch-controls").hidden = false;
    renderWatch();
  });
}

// One step of the watched game; false when it could not step (over, a step in flight, or an error shown).
async function watchStep() {
  const watch = state.watch;
  if (!watch || watch.view.over || watch.busy) return false;
  watch.busy = true;
  const view = await guarded(() => api("POST", `/api/games/${watch.game}/step`, {}, watch.token));
  watch.busy = false;
  if (view) watch.view = view;
  renderWatch();
  return Boolean(view);
}

function watchDelay() {
  return Number(document.getElementById("watch-speed").value);
}

// Playing steps, then waits the chosen delay before the next step: a slow step delays the game, never stops it.
// Each run has its own token, so a run paused while a step is in flight ends there even if a new one starts.
async function runWatch(run) {
  if (state.watchRun !== run) return;
  state.watchTimer = null;
  const stepped = await watchStep();
  if (state.watchRun !== run) return;
  if (!stepped || state.watch.view.over) return stopWatch();
  state.watchTimer = setTimeout(runWatch, watchDelay(), run);
}

function stopWatch() {
  state.watchRun = null;
  clearTimeout(state.watchTimer);
  state.watchTimer = null;
  document.getElementById("watch-run").textContent = "Play";
}

function toggleWatch() {
  if (state.watchRun) return stopWatch();
  state.watchRun = {};
  document.getElementById("watch-run").textContent = "Pause";
  runWatch(state.watchRun);
}

// A new speed applies from the next wait; a wait under way restarts at the new length.
function changeWatchSpeed() {
  if (!state.watchRun || state.watchTimer === null) return;
  clearTimeout(state.watchTimer);
  state.watchTimer = setTimeout(runWatch, watchDelay(), state.watchRun);
}

function probabilitiesElement(move) {
  if (!move) return null;
  const box = el("div", { className: "probabilities", id: "watch-move" },
    [el("h3", { text: `${move.player} (${move.agent}) chose ${move.action}` })]);
  const shares = move.probabilities || move.win_estimates;  // a policy's probabilities, or a search's win estimates
  if (!shares) return box;
  const word = move.probabilities ? "" : " won";
  const ordered = Object.entries(shares).sort((a, b) => b[1] - a[1]);
  for (const [label, p] of ordered) {
    box.append(el("div", { className: `probability${label === move.action ? " chosen" : ""}`, "data-probability": label }, [
      el("span", { text: `${label} ${(100 * p).toFixed(1)}%${word}`, style: "width: 12rem" }),
      el("div", { className: "bar", style: `width: ${Math.max(1, Math.round(300 * p))}px` }),
    ]));
  }
  return box;
}

function renderWatch() {
  const view = state.watch.view;
  const table = document.getElementById("watch-table");
  table.hidden = false;
  table.dataset.over = String(view.over);
  table.dataset.renders = String(++state.renders);
  const status = view.over ? `Game over: ${view.winner || "no one"} won. ${savedText(view)}` : `${view.current} (${view.names[view.players.indexOf(view.current)]}) to act: ${view.phase}`;
  const parts = [el("div", { className: "status", id: "watch-status", text: status })];
  if (view.warnings.length) parts.push(el("div", { className: "shown", text: view.warnings.join(" ") }));
  parts.push(tableElement(view, { prefix: "watch" }), probabilitiesElement(view.last_move), linesElement("Game so far", view.history, "watch-history"));
  table.replaceChildren(...parts.filter(Boolean));
  scrollToEnd(document.getElementById("watch-history"));
  if (view.over) stopWatch();
}

// ------------------------------------------------------------------ replay

// The newest records (the catalogue's page); "Older records" appends the next page of GET /api/records.
async function fillRecordList() {
  await guarded(async () => {
    const catalogue = await api("GET", "/api/catalogue");
    const select = document.getElementById("replay-files");
    select.replaceChildren(...catalogue.records.map((name) => el("option", { value: name, text: name })));
    document.getElementById("replay-more").hidden = catalogue.records.length >= catalogue.records_total;
  });
}

async function moreRecords() {
  await guarded(async () => {
    const select = document.getElementById("replay-files");
    const page = await api("GET", `/api/records?start=${select.options.length}`);
    select.append(...page.records.map((name) => el("option", { value: name, text: name })));
    document.getElementById("replay-more").hidden = select.options.length >= page.total;
  });
}

async function openReplay(body) {
  await guarded(async () => {
    const opened = await api("POST", "/api/replays", body);
    state.replay = { ...opened, index: 0, viewer: "spectator" };
    const jump = document.getElementById("replay-jump");
    jump.replaceChildren(...opened.decisions.map(([round, number, seat, action], index) => el("option", {
      value: index, text: seat === null ? `round ${round}: the deal` : `${index}. r${round} #${number} ${opened.players[seat]}: ${action}`,
    })));
    const viewer = document.getElementById("replay-viewer");
    viewer.replaceChildren(el("option", { value: "spectator", text: "spectator (every hand)" }),
      ...opened.players.map((agent, seat) => el("option", { value: String(seat), text: agent })));
    document.getElementById("replay-controls").hidden = false;
    await showFrame(0);
  });
}

async function uploadReplay(event) {
  const file = event.target.files[0];
  if (!file) return;
  if (file.size > 2 * 1024 * 1024) return showError(new Error(`${file.name} is over 2 MB: too big for a record`));
  const text = await file.text();
  let record;
  try {
    record = JSON.parse(text);
  } catch (error) {
    return showError(new Error(`${file.name} is not JSON: ${error.message}`));
  }
  await openReplay(record);
}

async function showFrame(index) {
  const replay = state.replay;
  if (!replay) return;
  index = Math.max(0, Math.min(replay.frames - 1, index));
  await guarded(async () => {
    const view = await api("GET", `/api/replays/${replay.replay}/frames/${index}?viewer=${replay.viewer}`, undefined, replay.token);
    replay.index = index;
    document.getElementById("replay-jump").value = String(index);
    document.getElementById("replay-position").textContent = `${index} / ${replay.frames - 1}`;
    const table = document.getElementById("replay-table");
    table.hidden = false;
    table.dataset.index = String(index);
    const parts = [el("div", { className: "status", id: "replay-title", text: view.title }), tableElement(view, { prefix: "replay" })];
    if (view.hand) parts.push(el("h3", { text: `${view.you}'s hand` }), el("div", { className: "hand" }, view.hand.map((c) => cardElement(c))));
    parts.push(linesElement("This step", view.events, "replay-events"), linesElement("Recent steps", view.history, "replay-history"));
    table.replaceChildren(...parts);
    scrollToEnd(document.getElementById("replay-history"));
  });
}

// ------------------------------------------------------------------ leaderboard

function interval(row) {
  return `${row.win_rate.toFixed(3)} [${row.low.toFixed(3)}, ${row.high.toFixed(3)}]`;
}

function rankingTable(ranking) {
  const head = ["rank", "agent", "rating μ ± σ", "ordinal (μ − 3σ)", "win rate per seat [95%]", "fair share", "mean points", "seat-rounds"];
  return el("table", { className: "board", id: "ranking" }, [
    el("tr", {}, head.map((h) => el("th", { text: h }))),
    ...ranking.map((row) => el("tr", { "data-agent": row.agent }, [
      el("td", { text: String(row.rank) }),
      el("td", {}, [state.agentNames.includes(row.agent)  // an agent the arena knows links to its card
        ? el("a", { href: `/api/agents/${encodeURIComponent(row.agent)}`, target: "_blank", className: "card-link", text: row.agent })
        : document.createTextNode(row.agent)]),
      ...[`${row.mu.toFixed(2)} ± ${row.sigma.toFixed(2)}`, row.ordinal.toFixed(2), interval(row), row.fair_share.toFixed(3),
        row.mean_points.toFixed(1), row.seat_rounds].map((cell) => el("td", { text: String(cell) }))])),
  ]);
}

function pairwiseTable(pairwise) {
  const agents = pairwise.agents;
  return el("table", { className: "board", id: "pairwise" }, [
    el("tr", {}, [el("th", { text: "win rate of row against column [95%]" }), ...agents.map((a) => el("th", { text: a }))]),
    ...agents.map((agent, i) => el("tr", {}, [el("td", { text: agent }), ...agents.map((_, j) => el("td", {
      text: pairwise.win_rate[i][j] === null ? "—" : interval({ win_rate: pairwise.win_rate[i][j], low: pairwise.low[i][j], high: pairwise.high[i][j] }),
    }))])),
  ]);
}

async function loadLeaderboard() {
  await guarded(async () => {
    const select = document.getElementById("results-sets");
    if (!select.options.length) {
      const catalogue = await api("GET", "/api/catalogue");
      state.agentNames = catalogue.agents;
      select.replaceChildren(...catalogue.results.map((name) => el("option", { value: name, text: name === "_" ? "(the results folder)" : name })));
    }
    const board = document.getElementById("leaderboard");
    if (!select.value) return board.replaceChildren(el("p", { text: "No results: start the arena with --results DIR (a tournament's --out folder)." }));
    const name = select.value;
    const data = await api("GET", `/api/results/${encodeURIComponent(name)}`);
    const config = data.results.config || {};
    board.replaceChildren(...[
      el("p", { text: `${(config.agents || []).join(", ")} · ${config.num_players} players · ${config.rounds_per_table} ${config.unit || "round"}s per table · seed ${config.seed}` }),
      rankingTable(data.results.ranking),
      data.results.pairwise ? pairwiseTable(data.results.pairwise) : null,
      el("div", { className: "plots" }, data.plots.map((plot) => el("img", { src: `/api/results/${encodeURIComponent(name)}/plots/${plot}`, alt: plot }))),
    ].filter(Boolean));
  });
}

// ------------------------------------------------------------------ ladder

function duplicateText(duplicate) {
  if (!duplicate) return "—";
  return `${duplicate.mean.toFixed(3)} [${duplicate.low.toFixed(3)}, ${duplicate.high.toFixed(3)}] (${duplicate.rounds})`;
}

async function loadLadder() {
  await guarded(async () => {
    const { players } = await api("GET", "/api/ladder");
    const head = ["rank", "name (its history)", "kind", "rating μ ± σ", "games", "duplicate [95%] (games)"];
    const nameCell = (name) => el("td", {}, el("button", { type: "button", className: "link", "data-history": name, text: name }));
    document.getElementById("ladder").replaceChildren(players.length ? el("table", { className: "board", id: "ladder-table" }, [
      el("tr", {}, head.map((h) => el("th", { text: h }))),
      ...players.map((row, index) => el("tr", { "data-name": row.name }, [
        el("td", { text: String(index + 1) }), nameCell(row.name),
        ...[row.kind, `${row.mu.toFixed(2)} ± ${row.sigma.toFixed(2)}`, String(row.games), duplicateText(row.duplicate)]
          .map((cell) => el("td", { text: cell }))])),
    ]) : el("p", { text: "Nobody on the ladder yet: play a game under a name (Play)." }));
  });
}

// One name's rating after each of its rated games (GET /api/ladder/NAME), drawn as a plot.
async function showHistory(name) {
  await guarded(async () => {
    const data = await api("GET", `/api/ladder/${encodeURIComponent(name)}`);
    document.getElementById("ladder-history").replaceChildren(
      el("h3", { text: `${data.name} (${data.kind}): μ after each rated game, the band μ ± 2σ` }),
      data.history.length ? historyPlot(data.history) : el("p", { text: "No rated games yet." }));
  });
}

function svgElement(tag, attributes = {}, text = null) {
  const node = document.createElementNS("http://www.w3.org/2000/svg", tag);
  for (const [key, value] of Object.entries(attributes)) node.setAttribute(key, value);
  if (text !== null) node.textContent = text;
  return node;
}

// An SVG plot of a rating history: x the games in order, y the rating; a line through μ with a point a game
// (data-mu: its value; a tooltip gives the game's id), over the band μ ± 2σ.
function historyPlot(history) {
  const width = 600, height = 240, left = 52, right = 16, top = 12, bottom = 34;
  const high = Math.max(...history.map((h) => h.mu + 2 * h.sigma)), low = Math.min(...history.map((h) => h.mu - 2 * h.sigma));
  const span = high - low || 1;
  const step = history.length > 1 ? (width - left - right) / (history.length - 1) : 0;
  const x = (index) => (history.length > 1 ? left + index * step : (left + width - right) / 2);
  const y = (value) => top + ((high - value) * (height - top - bottom)) / span;
  const line = (values) => values.map((value, index) => `${x(index).toFixed(1)},${y(value).toFixed(1)}`);
  const upper = line(history.map((h) => h.mu + 2 * h.sigma)), lower = line(history.map((h) => h.mu - 2 * h.sigma));
  const svg = svgElement("svg", { id: "ladder-plot", viewBox: `0 0 ${width} ${height}`, width, height, role: "img",
    "aria-label": `rating after each of ${history.length} games` });
  svg.append(
    svgElement("rect", { x: left, y: top, width: width - left - right, height: height - top - bottom, class: "frame" }),
    svgElement("polygon", { points: [...upper, ...lower.reverse()].join(" "), class: "band" }),
    svgElement("polyline", { points: line(history.map((h) => h.mu)).join(" "), class: "mu-line" }),
    ...[high, (high + low) / 2, low].map((value) => svgElement("text", { x: left - 6, y: y(value) + 4, class: "axis", "text-anchor": "end" }, value.toFixed(1))),
    svgElement("text", { x: left, y: height - 8, class: "axis" }, "game 1"),
    svgElement("text", { x: width - right, y: height - 8, class: "axis", "text-anchor": "end" }, `game ${history.length}`),
  );
  history.forEach((h, index) => {
    const point = svgElement("circle", { cx: x(index), cy: y(h.mu), r: 4, class: "mu", "data-mu": h.mu, "data-game": h.game });
    point.append(svgElement("title", {}, `game ${index + 1} (${h.game}): μ ${h.mu.toFixed(2)} ± ${h.sigma.toFixed(2)}`));
    svg.append(point);
  });
  return svg;
}

// ------------------------------------------------------------------ start

function wire() {
  document.getElementById("play-form").addEventListener("submit", startGame);
  document.getElementById("play-table").addEventListener("click", (event) => {
    const target = event.target.closest("[data-action]");
    if (target) playAction(target.dataset.action);
  });
  document.getElementById("watch-form").addEventListener("submit", startWatch);
  document.getElementById("watch-run").addEventListener("click", toggleWatch);
  document.getElementById("watch-step").addEventListener("click", watchStep);
  const speed = document.getElementById("watch-speed");
  const speedText = () => { document.getElementById("watch-speed-text").textContent = `${speed.value} ms a move`; };
  speed.addEventListener("input", () => { speedText(); changeWatchSpeed(); });
  speedText();
  document.getElementById("replay-open").addEventListener("click", () => openReplay({ file: document.getElementById("replay-files").value }));
  document.getElementById("replay-more").addEventListener("click", moreRecords);
  document.getElementById("replay-upload").addEventListener("change", uploadReplay);
  const step = (delta) => () => showFrame(state.replay.index + delta);
  document.getElementById("replay-first").addEventListener("click", () => showFrame(0));
  document.getElementById("replay-back").addEventListener("click", step(-1));
  document.getElementById("replay-forward").addEventListener("click", step(1));
  document.getElementById("replay-last").addEventListener("click", () => showFrame(state.replay.frames - 1));
  document.getElementById("replay-jump").addEventListener("change", (event) => showFrame(Number(event.target.value)));
  document.getElementById("replay-viewer").addEventListener("change", (event) => {
    state.replay.viewer = event.target.value;
    showFrame(state.replay.index);
  });
  document.getElementById("results-sets").addEventListener("change", loadLeaderboard);
  document.getElementById("ladder").addEventListener("click", (event) => {
    const target = event.target.closest("[data-history]");
    if (target) showHistory(target.dataset.history);
  });
  window.addEventListener("hashchange", showPage);
}

async function main() {
  wire();
  await guarded(async () => {
    state.catalogue = await api("GET", "/api/catalogue");
    document.getElementById("agent-names").replaceChildren(...state.catalogue.agents.map((name) => el("option", { value: name })));
    // a person's game is dealt at random unless the arena runs with --allow-decks
    document.getElementById("play-seed").closest("label").hidden = !state.catalogue.person_seeds;
    // an arena with a database (hpuno-arena --db) keeps a ladder
    document.getElementById("play-name").closest("label").hidden = !state.catalogue.ladder;
    document.getElementById("ladder-link").hidden = !state.catalogue.ladder;
    fillPlayers(document.getElementById("play-players"), 2);
    fillPlayers(document.getElementById("watch-players"), 4);
    for (const fieldset of document.querySelectorAll("fieldset.rules")) buildRules(fieldset);
  });
  showPage();
  await resumeGame();
  document.body.dataset.ready = "true";
}

main();
