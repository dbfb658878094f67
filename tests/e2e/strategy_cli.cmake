# Strategy databases through the three command lines, as a script uses them:
# tbgen strategy / strategy-import, tbprobe strategy-export, tbverify strategy;
# exit codes, output shapes, a hole found after an entry is deleted.
include(${CMAKE_CURRENT_LIST_DIR}/../support/cli_script.cmake)

set(db "${WORK}/strategy-cli.db")
file(REMOVE_RECURSE "${db}")
set(root "8/8/4k3/8/8/2b5/8/R3K3 w - - 0 1")
set(won "8/8/8/4R3/8/4K3/8/4k3 w - - 0 1")

run_tool(0 ${TBGEN} gen --variant fourfile --db ${db} KRvKB --quiet)

# Extraction: a drawn root gives a non-loss strategy, a won one a winning strategy.
run_tool(0 ${TBGEN} strategy --db ${db} --variant fourfile --fen ${root} --name draw)
expect("${out}" "^draw: non-loss strategy for white \\(root draw\\), [0-9]+ entries, [0-9]+ bytes")
run_tool(0 ${TBGEN} strategy --db ${db} --variant fourfile --fen ${won} --name win --json)
expect("${out}" "^{\"strategy\":\"win\",\"variant\":\"fourfile\",\"side\":\"white\",\"kind\":\"winning\",\"root_dtc\":7,\"entries\":[1-9]")
# A lost root (exit 1), a name taken (exit 2), a missing table (exit 3).
run_tool(1 ${TBGEN} strategy --db ${db} --variant fourfile --fen "4k3/8/8/8/8/8/8/R3K3 b - - 0 1" --name lost)
expect("${err}" "^tbgen: error: black loses at ")
run_tool(2 ${TBGEN} strategy --db ${db} --variant fourfile --fen ${root} --name draw)
expect("${err}" "already-exists.*--replace")
run_tool(3 ${TBGEN} strategy --db ${db} --variant fourfile --fen "4k3/8/2b5/8/8/8/8/Q3K3 w - - 0 1" --name q)
expect("${err}" "missing table fourfile/KQvKB")
run_tool(2 ${TBGEN} strategy --db ${db} --variant fourfile --fen ${root})
expect("${err}" "--name")

# Verification: closed strategies exit 0.
run_tool(0 ${TBVERIFY} strategy --db ${db} --name draw)
expect("${out}" "^draw \\(fourfile, white, non-loss\\): [0-9]+ entries, 1 root, [0-9]+ replies, 0 problems \\(.*\\): closed\n$")
run_tool(0 ${TBVERIFY} strategy --db ${db} --name win --json)
expect("${out}" "^{\"strategy\":\"win\",.*\"kind\":\"winning\",.*\"problems\":0,\"listed\":\\[\\],\"cycles_checked\":true,.*\"closed\":true}\n$")

# Export, drop one entry, import under a new name: the hole is reported.
run_tool(0 ${TBPROBE} strategy-export --db ${db} --name draw --output ${WORK}/draw.txt)
file(STRINGS ${WORK}/draw.txt lines)
list(GET lines 0 first)
expect("${first}" "^# tbforge strategy$")
list(FIND lines "# root: ${root}" at)
if(at LESS 0)
  message(FATAL_ERROR "no root line in the export:\n${lines}")
endif()
run_tool(0 ${TBPROBE} strategy-export --db ${db} --name draw)
file(READ ${WORK}/draw.txt written)
if(NOT out STREQUAL written)
  message(FATAL_ERROR "stdout and --output exports differ")
endif()
run_tool(0 ${TBGEN} strategy-import --db ${db} --variant fourfile --name copy --side white
         --root ${root} ${WORK}/draw.txt)
expect("${out}" "^copy: [0-9]+ entries from [0-9]+ lines \\(0 duplicates\\)")
run_tool(0 ${TBVERIFY} strategy --db ${db} --name copy)
# The same entries: identical exports apart from the name.
run_tool(0 ${TBPROBE} strategy-export --db ${db} --name copy)
string(REPLACE "# name: copy" "# name: draw" renamed "${out}")
if(NOT renamed STREQUAL written)
  message(FATAL_ERROR "export -> import -> export changed the text")
endif()

# The last entry is dropped (list index -1).
list(REMOVE_AT lines -1)
list(JOIN lines "\n" holed)
file(WRITE ${WORK}/holed.txt "${holed}\n")
run_tool(0 ${TBGEN} strategy-import --db ${db} --variant fourfile --name holed --side white
         --root ${root} ${WORK}/holed.txt)
run_tool(1 ${TBVERIFY} strategy --db ${db} --name holed)
expect("${out}" "hole: [^\n]+ w - - 0 1 plays [a-h][1-8][a-h][1-8]: reply [a-h][1-8][a-h][1-8] reaches [^\n]+, which has no entry\n")
expect("${out}" "NOT CLOSED\n$")
run_tool(1 ${TBVERIFY} strategy --db ${db} --name holed --json --max-errors 1)
expect("${out}" "\"listed\":\\[{\"kind\":\"hole\",\"fen\":\"[^\"]+\",\"move\":\"[a-h1-8]+\",\"reply\":\"[a-h1-8]+\",\"reached\":\"[^\"]+\"")
expect("${out}" "\"closed\":false}\n$")

# The draw marked winning: rejected.
run_tool(0 ${TBGEN} strategy-import --db ${db} --variant fourfile --name claimed --side white
         --kind winning --root ${root} ${WORK}/draw.txt)
run_tool(1 ${TBVERIFY} strategy --db ${db} --name claimed --max-errors 1000)
expect("${out}" "cycle: [^\n]+: a cycle of [0-9]+ entries")

# Import errors name the line and store nothing.
file(WRITE ${WORK}/bad.txt "# header\n${won}\te5e4\n${won}\tz9z9\n")
run_tool(2 ${TBGEN} strategy-import --db ${db} --variant fourfile --name bad --side white
         --root ${won} ${WORK}/bad.txt)
expect("${err}" "^tbgen: error: .*bad.txt: line 3: move 'z9z9' is not legal in ")
run_tool(3 ${TBVERIFY} strategy --db ${db} --name bad)
expect("${err}" "^tbverify: error: no strategy 'bad' in database")
run_tool(2 ${TBGEN} strategy-import --db ${db} --variant fourfile --name bad --side green
         --root ${won} ${WORK}/bad.txt)
run_tool(2 ${TBGEN} strategy-import --db ${db} --variant fourfile --name bad --side white
         --root ${won} ${WORK}/no-such-file.txt)

# Usage and database errors.
run_tool(2 ${TBVERIFY} strategy --db ${db})
expect("${err}" "^tbverify: error: strategy: missing --name")
run_tool(0 ${TBVERIFY} strategy --help)
expect("${out}" "^Usage: tbverify strategy")
run_tool(3 ${TBVERIFY} strategy --db ${WORK}/no-such.db --name draw)
run_tool(3 ${TBPROBE} strategy-export --db ${db} --name absent)
expect("${err}" "no strategy 'absent'")
run_tool(0 ${TBGEN} strategy --help)
run_tool(0 ${TBGEN} strategy-import --help)
run_tool(0 ${TBPROBE} strategy-export --help)
