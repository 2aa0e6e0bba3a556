// A program for SymbolsCLITests, compiled by the test with `g++ -O2` (GCC makes the clones;
// clang makes none of them). What it holds once linked:
// - `_init`, which crti.o defines with size 0 in `.init`, right before `.plt`;
// - C++ names (`_ZN4shop…`) for the upload to demangle, and one C name (`shop_entry`);
// - `shop::scaled(int, int) [clone .constprop.0]` (every call passes scale 3) and
//   `shop::decode(char const*, int) [clone .cold]` (the call of a cold function moved out).
#include <cstdio>
#include <cstring>

namespace shop {
__attribute__((noinline)) static int scaled(int value, int scale) {
    int sum = 0;
    for (int i = 0; i < value; i++) sum += i * scale ^ (sum >> 3);
    return sum;
}

__attribute__((cold, noinline)) void report(int at, int length) {
    std::fprintf(stderr, "decode: DEL at %d of %d\n", at, length);
}

__attribute__((noinline)) int decode(const char *text, int length) {
    int hash = 0;
    for (int i = 0; i < length; i++) {
        if (text[i] == 0x7f) {
            report(i, length);
            hash = -hash;
        }
        hash = hash * 31 + text[i];
    }
    return hash;
}
}

extern "C" __attribute__((noinline)) int shop_entry(int argc, char **argv) {
    int result = shop::scaled(argc * 100, 3) + shop::scaled(argc * 200, 3);
    return result + shop::decode(argv[0], (int)std::strlen(argv[0]));
}

int main(int argc, char **argv) {
    std::printf("%d\n", shop_entry(argc, argv));
    return 0;
}
