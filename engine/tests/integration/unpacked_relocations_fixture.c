// A shared library linked without pack-relative-relocs whose pointer table needs relative
// relocations: the positive control of packed_relocations.sh.
static const char kFirst[] = "first";
static const char kSecond[] = "second";
const char* const hs_fixture_names[] = {kFirst, kSecond};
