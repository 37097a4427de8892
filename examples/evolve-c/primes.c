/* The sum of the primes below N (argv[1]), by trial division: a C kernel for `lessonloop
   evolve` whose switches below are tuned by instruction count (see spec.yaml). */
#include <stdio.h>
#include <stdlib.h>

#define STOP_AT_SQRT 0 // lessonloop: param STOP_AT_SQRT bool
#define ODD_ONLY 0 // lessonloop: param ODD_ONLY bool
/* A deliberately wrong shortcut: only try divisors below 8. Fewer instructions, and wrong
   (49 = 7 * 7 passes, 121 = 11 * 11 too): it must never become the champion. */
#define SLOPPY 0 // lessonloop: param SLOPPY bool

static int is_prime(long n) {
    if (n < 2) return 0;
    if (ODD_ONLY && n % 2 == 0) return n == 2;
    for (long d = ODD_ONLY ? 3 : 2; d < n; d += ODD_ONLY ? 2 : 1) {
        if (STOP_AT_SQRT && d * d > n) break;
        if (SLOPPY && d >= 8) break;
        if (n % d == 0) return 0;
    }
    return 1;
}

int main(int argc, char **argv) {
    long limit = argc > 1 ? atol(argv[1]) : 1000;
    long long total = 0;
    for (long n = 2; n < limit; n++)
        if (is_prime(n)) total += n;
    printf("%lld\n", total);
    return 0;
}
