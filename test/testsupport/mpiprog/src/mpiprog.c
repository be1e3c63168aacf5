/*
 * mpiprog: checks, on every rank, that MPI sees the job Flux started, and
 * that messages cross the pods. Written for jobset-flux's MPI tests.
 *
 * Usage: mpiprog HOSTS   (HOSTS: how many distinct hosts the ranks span)
 *
 * Every rank checks that its MPI size and rank are Flux's FLUX_JOB_SIZE
 * and FLUX_TASK_RANK, an MPI_Allreduce, and its part of a ring message
 * that visits every rank in order (so it crosses every pod when the ranks
 * span the pods); rank 0 gathers every rank's hostname and its failures
 * and prints one summary line BEFORE MPI_Finalize:
 *
 *   mpiprog: OK size=4 flux-size=4 hosts=2 ring=4/10 allreduce=10/3 ranks=h0,h0,h1,h1 mpi=<library>
 *   mpiprog: FAIL <the same fields> failures=N
 *
 * and "mpiprog: finalized" after it, so that a hang in MPI_Finalize is
 * told apart from a failure. A singleton (size 1, as every task is under
 * pmi=off) prints its own FAIL line: its size is not Flux's.
 * Exit 0 only when every check on every rank passed.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define HOSTLEN 64

static int env_int(const char *name)
{
    const char *v = getenv(name);
    return v ? atoi(v) : -1;
}

/* ring passes a token from rank 0 through every rank back to rank 0; each
 * rank adds rank+1 to its sum and 1 to its hop count. Returns the number
 * of this rank's failed checks; rank 0 stores the token it got back. */
static int ring(int rank, int size, int token[2])
{
    int fails = 0;
    int next = (rank + 1) % size, prev = (rank + size - 1) % size;
    if (size < 2) {
        token[0] = 1;
        token[1] = 1;
        return 0;
    }
    if (rank == 0) {
        int t[2] = { 1, 1 };
        MPI_Send(t, 2, MPI_INT, next, 7, MPI_COMM_WORLD);
        MPI_Recv(token, 2, MPI_INT, prev, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else {
        MPI_Recv(token, 2, MPI_INT, prev, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        if (token[0] != rank) {
            fprintf(stderr, "mpiprog: rank %d: the ring token made %d hops, want %d\n", rank, token[0], rank);
            fails++;
        }
        token[0] += 1;
        token[1] += rank + 1;
        MPI_Send(token, 2, MPI_INT, next, 7, MPI_COMM_WORLD);
    }
    return fails;
}

/* distinct counts the distinct names among n hostnames. */
static int distinct(char *names, int n)
{
    int count = 0;
    for (int i = 0; i < n; i++) {
        int seen = 0;
        for (int j = 0; j < i && !seen; j++)
            seen = strcmp(names + i * HOSTLEN, names + j * HOSTLEN) == 0;
        count += !seen;
    }
    return count;
}

int main(int argc, char **argv)
{
    int rank, size, fails = 0, total = 0;
    int want_hosts = argc > 1 ? atoi(argv[1]) : -1;
    int flux_size = env_int("FLUX_JOB_SIZE"), flux_rank = env_int("FLUX_TASK_RANK");
    char host[HOSTLEN] = "";
    int sum = 0, max = 0, token[2] = { 0, 0 };

    MPI_Init(&argc, &argv);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    gethostname(host, sizeof(host) - 1);

    if (size != flux_size) {
        fprintf(stderr, "mpiprog: task %d on %s: MPI size %d, FLUX_JOB_SIZE %d\n", flux_rank, host, size, flux_size);
        fails++;
    }
    if (rank != flux_rank) {
        fprintf(stderr, "mpiprog: task %d on %s: MPI rank %d, FLUX_TASK_RANK %d\n", flux_rank, host, rank, flux_rank);
        fails++;
    }
    int mine = rank + 1;
    MPI_Allreduce(&mine, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    MPI_Allreduce(&rank, &max, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (sum != size * (size + 1) / 2 || max != size - 1) {
        fprintf(stderr, "mpiprog: rank %d: allreduce sum %d max %d, want %d and %d\n", rank, sum, max, size * (size + 1) / 2, size - 1);
        fails++;
    }
    fails += ring(rank, size, token);

    char *names = rank == 0 ? calloc((size_t)size, HOSTLEN) : NULL;
    MPI_Gather(host, HOSTLEN, MPI_CHAR, names, HOSTLEN, MPI_CHAR, 0, MPI_COMM_WORLD);
    MPI_Reduce(&fails, &total, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);

    if (rank == 0) {
        int hosts = distinct(names, size);
        if (token[0] != size || token[1] != size * (size + 1) / 2) {
            fprintf(stderr, "mpiprog: the ring token came back with %d hops and sum %d, want %d and %d\n", token[0], token[1], size, size * (size + 1) / 2);
            total++;
        }
        if (hosts != want_hosts) {
            fprintf(stderr, "mpiprog: the ranks span %d hosts, want %d\n", hosts, want_hosts);
            total++;
        }
        char lib[MPI_MAX_LIBRARY_VERSION_STRING] = "";
        int len = 0;
        MPI_Get_library_version(lib, &len);
        lib[strcspn(lib, "\n,")] = '\0';
        for (char *c = lib; *c; c++)
            if (*c == '\t' || *c == ' ')
                *c = '_';
        printf("mpiprog: %s size=%d flux-size=%d hosts=%d ring=%d/%d allreduce=%d/%d ranks=",
               total ? "FAIL" : "OK", size, flux_size, hosts, token[0], token[1], sum, max);
        for (int i = 0; i < size; i++)
            printf("%s%s", i ? "," : "", names + i * HOSTLEN);
        printf(" mpi=%s", lib);
        if (total)
            printf(" failures=%d", total);
        printf("\n");
        fflush(stdout);
        free(names);
    }
    MPI_Finalize();
    if (rank == 0) {
        printf("mpiprog: finalized\n");
        fflush(stdout);
    }
    return total || fails ? 1 : 0;
}
