module.exports = (output, context) => ({
  pass: output.length < 280,
  score: 1,
  reason: 'fits in a message',
});
