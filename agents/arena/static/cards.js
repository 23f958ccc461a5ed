// Cards and tables drawn from the server's views. Nothing here knows the rules: what may be clicked is the
// view's "legal" list, each action an element with data-action="LABEL".
"use strict";

const COLOURS = ["red", "yellow", "green", "blue"];
const RANK_SYMBOLS = { skip: "⊘", reverse: "⇄", draw2: "+2" };
const WILD_NAMES = { wild: "Wild", wild_draw4: "Wild +4", sorting_hat: "Sorting Hat" };
const HAT_SVG = '<svg class="hat" viewBox="0 0 64 48" aria-hidden="true">' +
  '<path d="M4 42 Q32 30 60 42 Q32 48 4 42 Z" fill="#5b3a1a"/>' +
  '<path d="M16 39 Q22 22 30 12 Q34 4 42 2 Q36 10 40 20 Q44 30 48 39 Q32 35 16 39 Z" fill="#7a4f26"/>' +
  '<path d="M22 30 Q27 27 31 30 M34 29 Q38 26 42 29" stroke="#2b1a08" stroke-width="2" fill="none"/>' +
  '<path d="M26 35 Q32 32 38 35" stroke="#2b1a08" stroke-width="2" fill="none"/></svg>';

function el(tag, attrs = {}, children = []) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (value === undefined || value === null || value === false) continue;
    if (key === "text") node.textContent = value;
    else if (key === "html") node.innerHTML = value;
    else if (key === "className") node.className = value;
    else node.setAttribute(key, value === true ? "" : value);
  }
  for (const child of [].concat(children)) if (child) node.append(child);
  return node;
}

// A card as a card: its colour, its symbol in the middle and the corners; the wilds in four colours.
function cardElement(label, options = {}) {
  const [head, rank] = label.split(":");
  const wild = !COLOURS.includes(head);
  const symbol = wild ? (label === "wild_draw4" ? "+4" : label === "wild" ? "W" : "") : (RANK_SYMBOLS[rank] || rank);
  const card = el("div", {
    className: `card ${wild ? "wild " + label : head}${options.small ? " small" : ""}${options.action ? " playable" : ""}`,
    "data-card": label,
    "data-action": options.action,
    title: wild ? WILD_NAMES[label] : `${head} ${rank}`,
    role: options.action ? "button" : null,
    tabindex: options.action ? "0" : null,
  });
  card.append(el("span", { className: "corner top", text: symbol }));
  const middle = el("div", { className: "middle" });
  if (label === "sorting_hat") middle.innerHTML = HAT_SVG + '<span class="caption">Sorting Hat</span>';
  else middle.append(el("span", { className: "symbol", text: symbol }));
  card.append(middle, el("span", { className: "corner bottom", text: symbol }));
  return card;
}

function cardBack(count) {
  return el("div", { className: "card back small", title: `${count} cards` }, [el("span", { className: "count", text: String(count) })]);
}

// Words on a button for an action that is not a card in the hand.
function actionText(label, view) {
  if (label.startsWith("color:")) return label.slice(6);
  if (label.startsWith("target:")) {
    const whom = (view.targets && view.targets[label]) || label;
    return view.top && view.top.endsWith(":7") ? `swap hands with ${whom}` : `Sorting Hat → ${whom}`;
  }
  const words = {
    draw: "Draw a card", keep: "Keep the drawn card", uno: "UNO!", challenge: "Challenge the Wild +4",
    accept: view.phase === "stack" ? `Accept (draw ${view.pending_draw})` : "Accept", catch: "Catch (no UNO)", pass: "Let it go",
  };
  return words[label] || label;
}

function seatLabel(view, agent) {
  const seat = view.players.indexOf(agent);
  const name = view.names ? view.names[seat] : "";
  return `${agent}${name ? " (" + name + ")" : ""}`;
}

// The public table: every seat with its hand (or hand size), the top card, colour, direction and piles.
function tableElement(view, options = {}) {
  const seats = el("div", { className: "seats" });
  for (const agent of view.players) {
    const classes = ["seat"];
    if (agent === view.current) classes.push("current");
    if (agent === view.you) classes.push("me");
    const seat = el("div", { className: classes.join(" "), "data-seat": agent }, [
      el("div", { className: "seat-name", text: seatLabel(view, agent) }),
      el("div", { className: "seat-info", text: `${view.hand_sizes[agent]} cards · ${view.scores[agent]} points` +
        (view.uno_called && view.uno_called[agent] ? " · UNO!" : "") }),
    ]);
    const hand = view.hands ? view.hands[agent] : null;
    if (hand) seat.append(el("div", { className: "mini-hand" }, hand.map((c) => cardElement(c, { small: true }))));
    else if (agent !== view.you) seat.append(cardBack(view.hand_sizes[agent]));
    if (view.shown && view.shown[agent]) {
      seat.append(el("div", { className: "shown", text: "shown to you by your challenge:" }),
        el("div", { className: "mini-hand shown-hand" }, view.shown[agent].map((c) => cardElement(c, { small: true }))));
    }
    seats.append(seat);
  }
  const arrow = view.direction === 1 ? "→ left (to higher seats)" : "← right (to lower seats)";
  const centre = el("div", { className: "centre" }, [
    el("div", { className: "pile" }, [cardBack(view.draw_pile_size ?? "?"), el("div", { text: "draw pile" })]),
    el("div", { className: "pile" }, [cardElement(view.top), el("div", { text: "top card" })]),
    el("div", { className: "facts" }, [
      el("div", { className: `colour-chip ${view.color || "none"}`, id: options.prefix + "-colour", text: `colour: ${view.color || "to be named"}` }),
      el("div", { text: `direction: ${arrow}` }),
      el("div", { text: `round ${view.round} · phase ${view.phase}` }),
      view.pending_draw ? el("div", { className: "pending", text: `pending draw: ${view.pending_draw}` }) : null,
    ]),
  ]);
  return el("div", {}, [seats, centre]);
}

function linesElement(title, lines, id, stepped = false) {
  // stepped: the lines appear one after another (the opponents' moves since the person's turn, in order)
  return el("div", { className: `events${stepped ? " stepped" : ""}`, id }, [el("h3", { text: title }),
    el("ul", {}, lines.map((line, i) => el("li", { text: line, style: stepped ? `animation-delay: ${350 * i}ms` : null })))]);
}
