#!/usr/bin/env bash
# Regenerates the GNU Go self-play corpus in this folder (see README.md).
#
# One GNU Go process per game plays both colours over GTP (`genmove black`, `genmove
# white`, ...) until two passes in a row (or a resignation, or the move cap), then is
# asked `final_status_list dead` and `final_score`. Each game is written as gameNN.sgf
# with a sidecar gameNN.expect holding GNU Go's answers, which tests/cli_rules.rs
# compares with `tengen rules --dead ...`.
#
# Usage: tests/data/gnugo/generate.sh [gameNN ...]   (all games when none is named;
#        GNUGO=/path/to/gnugo to use another binary)
set -euo pipefail

GNUGO=${GNUGO:-/usr/games/gnugo}
cd "$(dirname "$0")"

# name  size  komi  handicap  seed  move cap
GAMES=(
  "game01  9 7.5 0  1 200"
  "game02  9 7.5 0  2 200"
  "game03  9 7.5 0  3 200"
  "game04  9 7.5 0  4 200"
  "game05  9 7.5 0  5 200"
  "game06  9 7.5 0  6 200"
  "game07  9 0.5 2  7 200"
  "game08 13 7.5 0  8 400"
  "game09 13 7.5 0  9 400"
  "game10 13 0.5 2 10 400"
  "game11 19 7.5 0 11 700"
  "game12 19 7.5 0 12 700"
  "game13 19 7.5 0 13 700"
  "game14 19 0.5 2 15 700"
)

VERSION=$("$GNUGO" --version | head -n 1)
ALPHABET=abcdefghijklmnopqrstuvwxyz
GTP_COLUMNS=ABCDEFGHJKLMNOPQRSTUVWXYZ

# gtp COMMAND: sends COMMAND to the engine and leaves its answer (without "= ") in REPLY.
gtp() {
  printf '%s\n' "$1" >&"$TO_GNUGO"
  local line response=""
  while IFS= read -r line <&"$FROM_GNUGO"; do
    line=${line%$'\r'}
    [[ -z $line ]] && break
    response+=${response:+$'\n'}$line
  done
  if [[ $response != =* ]]; then
    echo "generate.sh: GNU Go answered \`$1\` with: $response" >&2
    exit 1
  fi
  REPLY=${response#=}
  REPLY=${REPLY# }
}

# sgf_point VERTEX SIZE: the SGF point (`dd`) of a GTP vertex (`D16`).
sgf_point() {
  local vertex=${1^^} size=$2
  local column=${vertex:0:1} row=${vertex:1}
  local before=${GTP_COLUMNS%%"$column"*}
  printf '%s%s' "${ALPHABET:${#before}:1}" "${ALPHABET:$((size - row)):1}"
}

play_game() {
  local name=$1 size=$2 komi=$3 handicap=$4 seed=$5 cap=$6
  # Named pipes rather than `coproc`: bash may unset a coproc's variables when an
  # earlier one is reaped, which loses the pipes in the middle of a game.
  local pipes
  pipes=$(mktemp -d)
  mkfifo "$pipes/in" "$pipes/out"
  "$GNUGO" --mode gtp --chinese-rules --level 1 --seed "$seed" <"$pipes/in" >"$pipes/out" &
  local engine=$!
  exec {TO_GNUGO}>"$pipes/in" {FROM_GNUGO}<"$pipes/out"
  gtp "boardsize $size"
  gtp "clear_board"
  gtp "komi $komi"
  local setup="" color=black
  if ((handicap >= 2)); then
    gtp "fixed_handicap $handicap"
    setup="HA[$handicap]AB"
    local v
    for v in $REPLY; do setup+="[$(sgf_point "$v" "$size")]"; done
    color=white
  fi
  local moves="" passes=0 count=0 ending="" letter
  while ((passes < 2)); do
    if ((count >= cap)); then
      ending="stopped at the cap of $cap moves"
      break
    fi
    gtp "genmove $color"
    letter=${color:0:1}
    letter=${letter^^}
    case ${REPLY,,} in
      resign)
        ending="$color resigned"
        break
        ;;
      pass)
        passes=$((passes + 1))
        moves+=";$letter[]"
        ;;
      *)
        passes=0
        moves+=";$letter[$(sgf_point "$REPLY" "$size")]"
        ;;
    esac
    count=$((count + 1))
    if ((count % 10 == 0)); then moves+=$'\n'; fi
    if [[ $color == black ]]; then color=white; else color=black; fi
  done
  ending=${ending:-two passes}
  gtp "final_status_list dead"
  local dead
  dead=$(echo $REPLY)
  gtp "final_score"
  local score=$REPLY result=$REPLY
  if [[ $ending == *resigned ]]; then
    if [[ $color == black ]]; then result=W+R; else result=B+R; fi
  fi
  gtp "quit"
  exec {TO_GNUGO}>&- {FROM_GNUGO}<&-
  wait "$engine"
  rm -r "$pipes"

  {
    printf '(;FF[4]GM[1]CA[UTF-8]AP[tengen tests/data/gnugo/generate.sh]SZ[%s]RU[Chinese]KM[%s]%s\n' \
      "$size" "$komi" "$setup"
    printf 'PB[%s]PW[%s]RE[%s]\n' "$VERSION" "$VERSION" "$result"
    printf 'GN[%s]C[%s --chinese-rules --level 1 --seed %s self-play, %s moves, %s]\n' \
      "$name" "$VERSION" "$seed" "$count" "$ending"
    printf '%s)\n' "$moves"
  } >"$name.sgf"
  {
    printf '# %s --mode gtp --chinese-rules --level 1 --seed %s, after the game\n' "$VERSION" "$seed"
    printf 'ending: %s\n' "$ending"
    printf 'dead: %s\n' "$dead"
    printf 'final_score: %s\n' "$score"
  } >"$name.expect"
  echo "$name: ${size}x$size, $count moves, $ending, dead [$dead], final_score $score"
}

for game in "${GAMES[@]}"; do
  name=${game%% *}
  if (($# > 0)) && [[ " $* " != *" $name "* ]]; then continue; fi
  # shellcheck disable=SC2086 # the fields are meant to split
  play_game $game
done
