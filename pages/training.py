import streamlit as st

st.title("training")
st.write("Being built.")
