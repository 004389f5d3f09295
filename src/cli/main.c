#include <stdio.h>
int main(void) { puts("ait"); return 0; }
