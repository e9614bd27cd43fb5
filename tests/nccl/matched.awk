# Check that the NCCL operations in a job's traces match across ranks.
# Input: `maya trace dump` of every rank's trace, concatenated.
#   - every communicator's members (COMM records) are ranks 0..n-1, once each
#   - every collective (comm, cseq) was issued by all n members, with the
#     same op, count, dtype, reduction and root
#   - every send (comm, sender, receiver, cseq) has its recv, same count/dtype
# Records of calls that failed (result != 0) are not operations.
# Prints one line per problem and a summary; exits 1 on any problem.

function field(name,    i, n, kv) {
    for (i = 1; i <= NF; i++) {
        n = index($i, "=")
        if (n && substr($i, 1, n - 1) == name)
            return substr($i, n + 1)
    }
    return ""
}

function problem(msg) {
    print "MISMATCH: " msg
    bad++
}

/^comm / {
    id = field("id")
    split(field("rank"), rr, "/")
    comm_size[id] = rr[2]
    if (comm_member[id, rr[1]]++)
        problem("communicator " id ": rank " rr[1] " defined twice")
    next
}

/^coll / {
    if (field("result") != "0")
        next
    op = field("op"); comm = field("comm"); seq = field("cseq")
    split(field("rank"), rr, "/")
    rank = rr[1]; peer = field("peer")
    what = "count=" field("count") " dtype=" field("dtype")
    if (op == "send" || op == "recv") {
        key = op == "send" ? comm " " rank "->" peer " #" seq : comm " " peer "->" rank " #" seq
        if (op == "send") {
            if (key in sends) problem("send " key " issued twice")
            sends[key] = what
        } else {
            if (key in recvs) problem("recv " key " issued twice")
            recvs[key] = what
        }
        next
    }
    key = comm " #" seq
    d = op " " what " redop=" field("redop") " root=" peer
    if (!(key in coll_desc)) {
        coll_desc[key] = d
        coll_first[key] = rank
        coll_size[key] = rr[2]
        ncoll++
    } else if (coll_desc[key] != d) {
        problem("collective " key ": rank " coll_first[key] " issued " coll_desc[key] ", rank " rank " issued " d)
    }
    if (coll_rank[key, rank]++)
        problem("collective " key ": rank " rank " issued it twice")
    coll_n[key]++
    comm_used[comm] = 1
}

END {
    for (id in comm_size) {
        for (r = 0; r < comm_size[id]; r++)
            if (!((id, r) in comm_member))
                problem("communicator " id ": rank " r " of " comm_size[id] " has no COMM record")
        ncomm++
    }
    for (key in coll_n)
        if (coll_n[key] != coll_size[key])
            problem("collective " key " (" coll_desc[key] "): issued by " coll_n[key] " of " coll_size[key] " ranks")
    for (key in sends) {
        if (!(key in recvs))
            problem("send " key " (" sends[key] ") has no recv")
        else if (sends[key] != recvs[key])
            problem("send " key " is " sends[key] " but its recv is " recvs[key])
        npairs++
    }
    for (key in recvs)
        if (!(key in sends))
            problem("recv " key " (" recvs[key] ") has no send")
    printf "matched %d collectives and %d send/recv pairs on %d communicators\n", ncoll, npairs - 0, ncomm
    exit bad ? 1 : 0
}
