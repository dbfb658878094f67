// The tbforge explorer: a board (chessground), the value of its position and
// every move's value, all from tbserve's lichess-style API on the same
// origin. The URL holds the variant and the FEN, so a position can be shared.
import { Chessground } from './chessground/chessground.min.js';

const DEFAULT_FEN = {
  'antichess': '8/8/8/8/8/8/8/KQ3k2 b - - 0 1',
  'antichess-fics': '8/8/8/8/8/8/8/KQ3k2 b - - 0 1',
  'antichess-joint': '8/8/8/8/8/8/8/KQ3k2 b - - 0 1',
  'fourfile': '4k3/8/8/8/8/8/8/R3K3 w - - 0 1',
};

// Four File units stand on files a, c, e and g: the others are greyed.
const FOUR_FILE_OFF = new Map();
for (const file of 'bdfh') {
  for (let rank = 1; rank <= 8; ++rank) FOUR_FILE_OFF.set(file + rank, 'off-board');
}

const el = (id) => document.getElementById(id);
let current = { variant: 'antichess', fen: DEFAULT_FEN.antichess, answer: null, lastMove: undefined };

const board = Chessground(el('board'), {
  coordinates: true,
  animation: { enabled: true, duration: 150 },
  movable: { free: false, showDests: true, events: { after: playFromBoard } },
  draggable: { enabled: true },
  premovable: { enabled: false },
  drawable: { enabled: false },
});

// FENs travel with underscores for spaces, as the lichess API accepts them.
function fenParam(fen) {
  return encodeURIComponent(fen.trim().replace(/ /g, '_')).replace(/%2F/g, '/');
}

function pageUrl(variant, fen) {
  return `?variant=${encodeURIComponent(variant)}&fen=${fenParam(fen)}`;
}

function fromUrl() {
  const params = new URLSearchParams(window.location.search);
  const variant = DEFAULT_FEN[params.get('variant')] ? params.get('variant') : 'antichess';
  const fen = (params.get('fen') || DEFAULT_FEN[variant]).replace(/_/g, ' ');
  return { variant, fen };
}

function sideName(fen) {
  return fen.split(' ')[1] === 'b' ? 'Black' : 'White';
}

// A move's value for the side making it, from the position after it.
function moverResult(move) {
  if (move.category === 'loss') return 'win';
  if (move.category === 'win') return 'loss';
  return 'draw';
}

function moveLabel(move) {
  const result = moverResult(move);
  if (result === 'draw') return 'Draw';
  const distance = move.conversion ? 1 : Math.abs(move.dtc) + 1;
  const word = result === 'win' ? 'Win' : 'Loss';
  return move.conversion ? `${word} · conversion` : `${word} · DTC ${distance}`;
}

function positionLabel(answer) {
  const side = sideName(answer.fen);
  const other = side === 'White' ? 'Black' : 'White';
  const dtc = Math.abs(answer.dtc);
  if (answer.category === 'win') return dtc ? `${side} wins · DTC ${dtc}` : `${side} has won`;
  if (answer.category === 'loss') return dtc ? `${other} wins · DTC ${dtc}` : `${other} has won`;
  return 'Draw';
}

function flagsLabel(answer) {
  const flags = [];
  if (answer.checkmate) flags.push('checkmate');
  if (answer.stalemate) flags.push('stalemate');
  if (answer.variant_win) flags.push('variant win for the side to move');
  if (answer.variant_loss) flags.push('variant loss for the side to move');
  if (answer.insufficient_material) flags.push('insufficient material');
  return flags.join(', ');
}

function destinations(moves) {
  const dests = new Map();
  for (const move of moves) {
    const from = move.uci.slice(0, 2);
    const to = move.uci.slice(2, 4);
    if (!dests.has(from)) dests.set(from, []);
    if (!dests.get(from).includes(to)) dests.get(from).push(to);
  }
  return dests;
}

function setBoard(variant, fen, answer) {
  const color = sideName(fen) === 'White' ? 'white' : 'black';
  const config = {
    fen: fen.split(' ')[0],
    turnColor: color,
    lastMove: current.lastMove,
    highlight: { lastMove: true, custom: variant === 'fourfile' ? FOUR_FILE_OFF : new Map() },
    movable: { color: answer ? color : undefined, dests: answer ? destinations(answer.moves) : new Map() },
  };
  try {
    board.set(config);
  } catch (e) {
    board.set({ fen: '8/8/8/8/8/8/8/8', movable: { dests: new Map() } });
  }
}

function renderMoves(answer) {
  const list = el('moves');
  list.replaceChildren();
  for (const move of answer.moves) {
    const item = document.createElement('li');
    item.className = moverResult(move);
    item.dataset.uci = move.uci;
    item.dataset.fen = move.fen;
    const san = document.createElement('span');
    san.className = 'san';
    san.textContent = move.san;
    const uci = document.createElement('span');
    uci.className = 'uci';
    uci.textContent = move.uci;
    const value = document.createElement('span');
    value.className = 'move-value';
    value.textContent = moveLabel(move);
    item.append(san, uci, value);
    item.addEventListener('click', () => play(move));
    list.append(item);
  }
}

function showError(message) {
  el('value').className = 'value error';
  el('value').textContent = message;
  el('flags').textContent = '';
  el('moves').replaceChildren();
}

async function load(variant, fen, how) {
  document.body.dataset.state = 'loading';
  current.variant = variant;
  current.fen = fen.trim();
  el('variant').value = variant;
  el('fen').value = current.fen;
  el('turn').textContent = `${sideName(current.fen)} to move`;
  if (how === 'push') history.pushState({ variant, fen: current.fen }, '', pageUrl(variant, current.fen));
  if (how === 'replace') history.replaceState({ variant, fen: current.fen }, '', pageUrl(variant, current.fen));
  let answer = null;
  try {
    const response = await fetch(`${variant}?fen=${fenParam(current.fen)}`);
    const body = await response.json();
    if (!response.ok) throw new Error(body.error || `HTTP ${response.status}`);
    answer = body;
  } catch (e) {
    current.answer = null;
    setBoard(variant, current.fen, null);
    showError(e.message);
    document.body.dataset.state = 'error';
    return;
  }
  current.answer = answer;
  setBoard(variant, current.fen, answer);
  el('value').className = `value ${answer.category}`;
  el('value').textContent = positionLabel(answer);
  el('flags').textContent = flagsLabel(answer);
  renderMoves(answer);
  document.body.dataset.state = 'ready';
}

function play(move) {
  current.lastMove = [move.uci.slice(0, 2), move.uci.slice(2, 4)];
  load(current.variant, move.fen, 'push');
}

// A move made on the board: the best-listed move between those squares (the
// best promotion, when there are several).
function playFromBoard(orig, dest) {
  const move = current.answer && current.answer.moves.find((m) => m.uci.startsWith(orig + dest));
  if (move) play(move);
}

function withSide(fen, side) {
  const fields = fen.trim().split(/\s+/);
  fields[1] = side;
  if (fields.length > 3) fields[3] = '-';
  return fields.join(' ');
}

el('fen-form').addEventListener('submit', (event) => {
  event.preventDefault();
  current.lastMove = undefined;
  load(el('variant').value, el('fen').value, 'push');
});
el('variant').addEventListener('change', () => {
  current.lastMove = undefined;
  load(el('variant').value, DEFAULT_FEN[el('variant').value], 'push');
});
el('side-white').addEventListener('click', () => load(current.variant, withSide(current.fen, 'w'), 'push'));
el('side-black').addEventListener('click', () => load(current.variant, withSide(current.fen, 'b'), 'push'));
el('flip').addEventListener('click', () => board.toggleOrientation());
window.addEventListener('popstate', () => {
  const { variant, fen } = fromUrl();
  current.lastMove = undefined;
  load(variant, fen, 'none');
});

const start = fromUrl();
load(start.variant, start.fen, 'replace');
