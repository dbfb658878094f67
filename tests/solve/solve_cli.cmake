# `tbgen solve` as a script runs it: exit codes 0/1/2/3, the JSON summary,
# resume after a node budget, and `tbverify strategy` on what it stores
# (closed as stored; a hole once an entry is deleted from its text).
include(${CMAKE_CURRENT_LIST_DIR}/../support/cli_script.cmake)

set(db "${WORK}/solve-cli.db")
file(REMOVE_RECURSE "${db}" "${db}.solve" "${WORK}/solve-cli-work")
set(drawn "8/8/4k3/8/8/2b5/8/R3K3 w - - 0 1")
set(lost "4k3/8/8/8/8/8/8/R3K3 b - - 0 1")

# Bad input: exit 2, one line naming the problem.
run_tool(2 ${TBGEN} solve --variant fourfile --db ${db} --fen "8/8/8/x" --side white --name a)
expect("${err}" "^tbgen solve: error: --fen: ")
run_tool(2 ${TBGEN} solve --variant antichess --db ${db} --fen ${drawn} --side white --name a)
expect("${err}" "fourfile only")
run_tool(2 ${TBGEN} solve --variant fourfile --db ${db} --fen ${drawn} --side black --name a)
expect("${err}" "white is to move")
run_tool(2 ${TBGEN} solve --variant fourfile --db ${db} --fen ${drawn} --side white)
expect("${err}" "--name")
run_tool(2 ${TBGEN} solve --variant fourfile --db ${db} --fen ${drawn} --side white --name a --memory 12Q)
expect("${err}" "--memory")
run_tool(2 ${TBGEN} solve --variant fourfile --db ${db} --fen ${drawn} --side white --name a --mate-depth 5)
expect("${err}" "--mate-depth")
run_tool(2 ${TBGEN} solve --variant fourfile --db ${db} --fen ${drawn} --side white --name a --region-depth 4)
expect("${err}" "--region-depth")
run_tool(2 ${TBGEN} solve --variant fourfile --db ${db} --fen ${drawn} --side white --name a --region-budget 0)
expect("${err}" "--region-budget")
run_tool(2 ${TBGEN} solve --variant fourfile --db ${db} --fen ${drawn} --side white --name a --quiet-budget x)
expect("${err}" "--quiet-budget")
run_tool(2 ${TBGEN} solve --variant fourfile --db ${db} --fen ${drawn} --side white --name a --pieces-budget -1)
expect("${err}" "--pieces-budget")
run_tool(2 ${TBGEN} solve --variant fourfile --db ${db} --fen ${drawn} --side white --name a --pieces-depth 4)
expect("${err}" "--pieces-depth")
run_tool(2 ${TBGEN} solve --variant fourfile --db ${db} --fen ${drawn} --side white --name a --no-dense --dense-conversions)
expect("${err}" "--dense-conversions")
run_tool(0 ${TBGEN} solve --help)
expect("${out}" "--tables")
expect("${out}" "--no-regions")
expect("${out}" "--region-budget")
expect("${out}" "--quiet-budget")
expect("${out}" "--exchanges")
expect("${out}" "--no-dense")
expect("${out}" "--dense-conversions")
expect("${out}" "--guarded")
expect("${out}" "--pieces-budget")

# Locked pawns: the root is a region leaf (one position in the graph), and
# the region's strategy is stored with it and verifies; without region
# leaves and quiet games the search expands many more, and with quiet games
# alone a few.
set(locked "r3k3/8/8/p3p3/P3P3/8/8/R3K3 w - - 0 1")
run_tool(0 ${TBGEN} solve --variant fourfile --db ${db} --fen ${locked} --side white --name locked --quiet --json)
expect("${out}" "\"nodes\":1,\"expanded\":1,.*\"region_explorations\":[1-9][0-9]*,\"region_positions\":[1-9][0-9]*,\"region_safe\":1,")
run_tool(0 ${TBVERIFY} strategy --db ${db} --name locked)
expect("${out}" "closed")
# A region budget below the region's size gives the region up: the root is
# no leaf, and the search (quiet games among its leaves) closes it instead.
run_tool(0 ${TBGEN} solve --variant fourfile --db ${db} --fen ${locked} --side white --name locked-small-regions
         --region-budget 100 --quiet --json)
expect("${out}" "\"nodes\":([2-9]|[1-9][0-9]+),.*\"region_safe\":0,\"region_given_up\":[1-9][0-9]*,")
run_tool(0 ${TBVERIFY} strategy --db ${db} --name locked-small-regions)
expect("${out}" "closed")
run_tool(0 ${TBGEN} solve --variant fourfile --db ${db} --fen ${locked} --side white --name locked-plain
         --no-regions --quiet-budget 0 --quiet --json)
expect("${out}" "\"nodes\":[0-9][0-9][0-9][0-9]+,.*\"region_explorations\":0,.*\"quiet_explorations\":0,")
run_tool(0 ${TBGEN} solve --variant fourfile --db ${db} --fen ${locked} --side white --name locked-quiet
         --no-regions --quiet --json)
expect("${out}" "\"nodes\":[0-9]+,.*\"region_explorations\":0,.*\"quiet_explorations\":[1-9]")
run_tool(0 ${TBVERIFY} strategy --db ${db} --name locked-quiet)
expect("${out}" "closed")
# A budget far below the quiet games' sizes cuts them (docs/fourfile.md,
# "Cut games"): some are still safe at their start, and the strategy closes.
# Which games are met depends on X's move order: the one-reply mate search
# (--mate-depth 2 --no-mate-threats) meets games that are safe when cut; the
# default order meets only unsafe ones here. Without --no-dense the dense
# game would answer the first unsafe cut game exactly, before any of these.
run_tool(0 ${TBGEN} solve --variant fourfile --db ${db} --fen ${locked} --side white --name locked-cut
         --no-regions --quiet-budget 4000 --mate-depth 2 --no-mate-threats --no-dense --quiet --json)
expect("${out}" "\"quiet_cut\":[1-9][0-9]*,\"quiet_cut_safe\":[1-9]")
run_tool(0 ${TBVERIFY} strategy --db ${db} --name locked-cut)
expect("${out}" "closed")

# The e-pawns are not locked, so no region applies; pieces games (White's
# pawns stay where they are) prove the root from a few hundred positions,
# where the plain search needs thousands, and the strategy verifies.
set(free "r3k3/8/8/p3p3/P7/4P3/8/R3K3 w - - 0 1")
run_tool(0 ${TBGEN} solve --variant fourfile --db ${db} --fen ${free} --side white --name free-pieces
         --no-regions --quiet-budget 0 --pieces-budget 100000 --quiet --json)
expect("${out}" "\"nodes\":[0-9][0-9]?[0-9]?,.*\"pieces_explorations\":[1-9][0-9]*,\"pieces_positions\":[1-9][0-9]*,\"pieces_cut\":0,\"pieces_safe\":[1-9]")
run_tool(0 ${TBVERIFY} strategy --db ${db} --name free-pieces)
expect("${out}" "closed")
run_tool(0 ${TBGEN} solve --variant fourfile --db ${db} --fen ${free} --side white --name free-plain
         --no-regions --quiet-budget 0 --quiet --json)
expect("${out}" "\"nodes\":[0-9][0-9][0-9][0-9]+,.*\"pieces_explorations\":0,")

# Black's knight guarded by its king: the plain quiet game loses it to the
# rook, the game with exchanges recaptures, so with --exchanges the root is
# a leaf (one position), without it a search; the strategy verifies.
set(guarded "8/8/8/8/2n1k3/4R3/4K3/8 b - - 0 1")
run_tool(0 ${TBGEN} solve --variant fourfile --db ${db} --fen ${guarded} --side black --name guarded-plain
         --quiet --json)
expect("${out}" "\"nodes\":([2-9]|[1-9][0-9]+),")
run_tool(0 ${TBGEN} solve --variant fourfile --db ${db} --fen ${guarded} --side black --name guarded
         --exchanges --quiet --json)
expect("${out}" "\"nodes\":1,\"expanded\":1,.*\"quiet_explorations\":[1-9]")
# The whole game over the dense index (captures and promotions played) is
# the table's game of this material: a leaf at the root as well, and its
# strategy, which follows the captures into smaller materials, verifies.
run_tool(0 ${TBGEN} solve --variant fourfile --db ${db} --fen ${guarded} --side black --name guarded-dense
         --dense-conversions --quiet --json)
expect("${out}" "\"nodes\":1,\"expanded\":1,.*\"quiet_dense_structures\":[1-9][0-9]*,\"quiet_dense_positions\":[1-9]")
run_tool(0 ${TBVERIFY} strategy --db ${db} --name guarded-dense)
expect("${out}" "closed")
run_tool(0 ${TBVERIFY} strategy --db ${db} --name guarded)
expect("${out}" "closed")

# White's rook against the knight: with --guarded the root is a fortress
# leaf (White waits with the rook where a capture of the knight's is one
# White takes back), without it a quiet game's; both verify.
set(rook_knight "8/8/2R5/8/8/n3k3/8/4K3 w - - 0 1")
run_tool(0 ${TBGEN} solve --variant fourfile --db ${db} --fen ${rook_knight} --side white --name rook-knight
         --quiet --json)
expect("${out}" "\"nodes\":1,.*\"fortress_leaves\":0,.*\"quiet_explorations\":[1-9]")
run_tool(0 ${TBVERIFY} strategy --db ${db} --name rook-knight)
expect("${out}" "closed")
run_tool(0 ${TBGEN} solve --variant fourfile --db ${db} --fen ${rook_knight} --side white --name rook-knight-guarded
         --guarded --quiet --json)
expect("${out}" "\"nodes\":1,.*\"fortress_leaves\":1,")
run_tool(0 ${TBVERIFY} strategy --db ${db} --name rook-knight-guarded)
expect("${out}" "closed")

# A database path that is a file: exit 3.
file(WRITE "${WORK}/solve-cli-file" "x")
run_tool(3 ${TBGEN} solve --variant fourfile --db ${WORK}/solve-cli-file --fen ${drawn} --side white --name a --quiet)

# Proven and stored (0), verified closed; the same name again needs --replace.
run_tool(0 ${TBGEN} solve --variant fourfile --db ${db} --fen ${drawn} --side white --name draw --quiet --json)
expect("${out}" "\"verdict\":\"proven\"")
expect("${out}" "\"entries\":[1-9][0-9]*")
run_tool(0 ${TBVERIFY} strategy --db ${db} --name draw)
expect("${out}" "closed")
run_tool(2 ${TBGEN} solve --variant fourfile --db ${db} --fen ${drawn} --side white --name draw --quiet)
expect("${err}" "--replace")

# A lost root: exit 1, nothing stored.
run_tool(1 ${TBGEN} solve --variant fourfile --db ${db} --fen ${lost} --side black --name lost --quiet)
expect("${out}" "lost.*nothing stored")
run_tool(3 ${TBVERIFY} strategy --db ${db} --name lost)

# Stopped by a node budget (exit 1, checkpoint kept), then resumed to the
# same result as the uninterrupted run.
run_tool(1 ${TBGEN} solve --variant fourfile --db ${db} --fen ${drawn} --side white --name resumed
         --quiet --max-nodes 60 --work ${WORK}/solve-cli-work)
expect("${out}" "not-proven \\(node budget reached\\)")
if(NOT EXISTS "${WORK}/solve-cli-work/resumed.solve")
  message(FATAL_ERROR "no checkpoint after a node budget")
endif()
run_tool(0 ${TBGEN} solve --variant fourfile --db ${db} --fen ${drawn} --side white --name resumed
         --quiet --json --work ${WORK}/solve-cli-work)
expect("${out}" "\"verdict\":\"proven\".*\"resumed\":[1-9]")
run_tool(0 ${TBVERIFY} strategy --db ${db} --name resumed)

# A hole: the text of the strategy without one of its entries, imported back.
run_tool(0 ${TBPROBE} strategy-export --db ${db} --name draw --output ${WORK}/solve-cli.txt)
file(STRINGS "${WORK}/solve-cli.txt" lines)
set(kept "")
set(dropped 0)
foreach(line IN LISTS lines)
  if(NOT line MATCHES "^#" AND dropped EQUAL 0 AND NOT line MATCHES "^8/8/4k3/8/8/2b5/8/R3K3 w")
    set(dropped 1)
  else()
    string(APPEND kept "${line}\n")
  endif()
endforeach()
file(WRITE "${WORK}/solve-cli-holed.txt" "${kept}")
run_tool(0 ${TBGEN} strategy-import --db ${db} --variant fourfile --name holed --side white
         --root ${drawn} ${WORK}/solve-cli-holed.txt)
run_tool(1 ${TBVERIFY} strategy --db ${db} --name holed)
expect("${out}" "hole: ")
