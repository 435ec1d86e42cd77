// A small CSV for the consumer checks (60 rows, 2 classes).
// 60 rows, 30 per class: runs that check the exact row count use the label-keeping adjacency
// (public class counts); under the default standard adjacency T and the class split follow
// DP class counts, which are too noisy at this size.
export const CSV =
  "x,y,label\n" + Array.from({ length: 60 }, (_, i) => `${(i * 7) % 13},${(i * 5) % 11},${i % 2 ? "a" : "b"}`).join("\n") + "\n";
export const rows = (csv) => csv.trim().split("\n").length - 1;
