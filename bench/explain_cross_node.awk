# SPDX-License-Identifier: GPL-2.0-only
# Cross-node task moves by cause, from a `schedlab run --explain FILE` decision log of a
# two-node machine numbered as bergamo-2s is (node = (cpu % 256) / 128; set half=N for N
# first threads per node, e.g. -v half=128). Lane hb8v3 (docs/validation.md, "hackbench at 8
# groups: the back-and-forth by cause"):
#
#   awk -f bench/explain_cross_node.awk FILE
#
# A wakeup moves a task across when its select_task_rq entry's prev and chosen CPU are on
# different nodes (counted by the placement's branch and select_idle_sibling's); a balancer
# pull when a load_balance entry's source CPU is on the other node than the pulling CPU (by
# level and idle type); a shard pop likewise (SHARED_RUNQ). Also: the wakeups whose waker's
# CPU is on the other node than the wakee's prev, by branch (the cross-node wakeups that
# could move it); the sync rule's share of all wakeups; the newly-idle passes by node; the moves
# per 100 ms of simulated time; and, after each NUMA pull across, the wakeups logged on the
# pulling CPU (by the task running there next, mostly the pulled one) within W ns (-v W=N,
# default 1 ms): how many take a wakee from the other node to the puller's.
function node(c) { return int((c % (2 * half)) / half) }
function cpun(s) { sub(/^cpu/, "", s); sub(/[^0-9].*$/, "", s); return s + 0 }
BEGIN { if (!half) half = 128; if (!W) W = 1000000 }
{ t = $1 + 0; me = cpun($2); w = int(t * 10); if (w > maxw) maxw = w }
$3 == "select_task_rq" {
    for (i = 6; i <= NF; i++) if ($i == "prev") break
    x = cpun($(i + 1)); y = cpun($(i + 3))
    r = $0; sub(/^.*-> cpu[0-9]+: /, "", r)
    br = r; sub(/;.*$/, "", br); sis = r; sub(/^[^;]*(; )?/, "", sis); sub(/select_idle_sibling: /, "", sis)
    wakes++; if (br ~ /\(sync\)/) syncw++
    if ((me in pulled_at) && t * 1e9 - pulled_at[me] <= W) {
        after++; if (node(x) != node(me)) { after_other++; if (node(y) == node(me)) after_drag++ }
    }
    if (node(me) != node(x)) { opp++; oppb[br]++ }
    if (node(x) != node(y)) { cnt["wakeup: " br " | " sis]++; wto[node(y)]++; ww[w, node(y)]++ }
    next
}
$3 == "shared_runq" && $4 == "pulled" { pops++; if (node(cpun($8)) != node(me)) cnt["shard pop"]++; next }
$3 == "load_balance" && / pulled / {
    ty = $5; sub(/:$/, "", ty)
    for (i = 6; i <= NF; i++) if ($i == "from") break
    if (node(cpun($(i + 1))) != node(me)) {
        cnt["pull: " $4 " " ty] += $7; lto[node(me)] += $7; lw[w, node(me)] += $7
        if ($4 == "NUMA") { pulled_at[me] = t * 1e9; numa_pulls++ }
    }
    next
}
$3 == "newidle_balance" {
    nd = node(me)
    if ($5 ~ /^domain_cost/) pass[$4, nd]++
    else if ($4 == "NUMA" && $5 == "too") numatoo[nd]++
    else if ($4 == "gate") gate[$5, nd]++
}
END {
    printf "wakeups %d (by the sync rule %d, %.1f%%), shard pops %d\n", wakes, syncw, wakes ? 100 * syncw / wakes : 0, pops
    printf "cross-node moves by cause:\n"
    for (k in cnt) printf "%9d  %s\n", cnt[k], k | "sort -rn"
    close("sort -rn")
    printf "wakeup moves to node 0 / 1: %d / %d; pulls to node 0 / 1: %d / %d\n", wto[0], wto[1], lto[0], lto[1]
    printf "wakeups whose waker's CPU is on the other node than prev: %d, by branch:\n", opp
    for (k in oppb) printf "%9d  %s\n", oppb[k], k | "sort -rn"
    close("sort -rn")
    for (n = 0; n < 2; n++)
        printf "node %d newly idle: gate closed %d, open %d; passes SMT %d MC %d DIE %d NUMA %d; NUMA too costly %d\n", n,
            gate["closed:", n], gate["open:", n], pass["SMT", n], pass["MC", n], pass["DIE", n], pass["NUMA", n], numatoo[n]
    printf "NUMA pulls across %d; wakeups logged on the puller within %d us of one: %d, of tasks on the other node %d, taken to the puller's node %d (%.2f a pull)\n",
        numa_pulls, W / 1000, after, after_other, after_drag, numa_pulls ? after_drag / numa_pulls : 0
    printf "per 100 ms: from  wakeup moves to node 0, to 1  pulls to node 0, to 1\n"
    for (i = 0; i <= maxw; i++) printf "  %4.1f s  %7d %7d  %6d %6d\n", i / 10, ww[i, 0], ww[i, 1], lw[i, 0], lw[i, 1]
}
